"""Redistribution of M snapshot shards into N ranks (episodes whole, balanced, exact priorities).

The plan is a pure function of the shard manifests, their per-slot meta fields and N: it
never depends on directory listing order, splits no episode, balances transitions greedily
(sizes differ by at most one episode), keeps an episode's env id where the destination has
that env free (an open episode continues in its own env) and rewrites the others,
keeps every priority to the bit and keeps episode ids (globally unique) unchanged.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer import ted
from RLA.replay_buffer.schema import FLAG_TRUNCATED, Schema
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.load import check_compatible
from RLA.replay_buffer.snapshot.shard_io import (
    read_arrays,
    read_meta,
    read_segment_into,
    ring_order,
    segment_fields,
)

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

TRUNCATION_FIELDS = ("truncated", "next.truncated")


def plan(
    shards: Dict[int, Dict[str, Any]],
    metas: Dict[int, Dict[str, np.ndarray]],
    world_size: int,
    capacity: int,
    num_envs: int,
    policy: Dict[str, str],
    on_overflow: str = "drop_oldest",
) -> Dict[str, Any]:
    """Assign every kept episode of every source shard to one of ``world_size`` ranks.

    Returns a dict with ``ranks`` (per destination: list of episodes, each a dict with the
    source shard, source slots in step order, env id, carried/truncated flags), per-rank
    ``counters`` and a ``report`` of what was kept, dropped, truncated and carried.
    """
    if on_overflow not in ("drop_oldest", "error"):
        raise ReplayBufferError(
            "Bad on_overflow",
            expected="'drop_oldest' or 'error'",
            found=repr(on_overflow),
            fix="pass one of them",
        )
    episodes: List[Dict[str, Any]] = []
    next_counter = 0
    report: Dict[str, Any] = {c: {"episodes": 0, "steps": 0} for c in ep_mod.CLASSES}
    report.update(
        dropped={"episodes": 0, "steps": 0},
        overflow={"episodes": 0, "steps": 0},
        truncated={"episodes": 0, "steps": 0},
        carried=0,
        uncarried_open=0,
    )
    for m in sorted(shards):
        shard, meta = shards[m], metas[m]
        size = int(shard["size"])
        order = ring_order(size, int(shard["cursor"]), int(shard["capacity"]))
        table = ep_mod.episode_table(meta["_episode_id"], meta["_step"], meta["_flags"], order)
        classes = ep_mod.classify(table)
        current = set(int(x) for x in shard["episodes"]["current"] if x >= 0)
        next_counter = max(next_counter, int(shard["episodes"]["next_counter"]))
        if table["id"].size:
            next_counter = max(next_counter, int(ep_mod.episode_counter(table["id"]).max()) + 1)
        base = int(shard["write_count"]) - size
        for i in range(table["id"].size):
            cls = str(classes[i])
            n = int(table["length"][i])
            report[cls]["episodes"] += 1
            report[cls]["steps"] += n
            action = policy[cls]
            if action == "drop":
                report["dropped"]["episodes"] += 1
                report["dropped"]["steps"] += n
                continue
            start = int(table["start"][i])
            is_open = cls in ("open", "headless_open")
            slots = table["slots_sorted"][start : start + n]
            episodes.append(
                {
                    "key": (base + int(table["first_pos"][i]), m, int(table["id"][i])),
                    "shard": m,
                    "slots": slots,
                    "length": n,
                    "src_env": int(meta["_env_id"][slots[0]]) if n else 0,
                    "carry": is_open and action == "carry" and int(table["id"][i]) in current,
                    "truncate": action == "mark_truncated",
                    "id": int(table["id"][i]),
                }
            )
    episodes.sort(key=lambda e: e["key"])
    loads = np.zeros(world_size, dtype=np.int64)
    ranks: List[List[Dict[str, Any]]] = [[] for _ in range(world_size)]
    for ep in episodes:  # greedy: least-loaded rank, ties to the lowest rank
        r = int(np.argmin(loads))
        ranks[r].append(ep)
        loads[r] += ep["length"]
    for r in range(world_size):
        while loads[r] > capacity:
            if on_overflow == "error":
                raise ReplayBufferError(
                    "The snapshot does not fit the new topology",
                    expected=f"at most {capacity} items per rank",
                    found=f"{int(loads[r])} items for rank {r}",
                    fix="raise the capacity or pass on_overflow='drop_oldest'",
                )
            ep = ranks[r].pop(0)  # the oldest
            loads[r] -= ep["length"]
            report["overflow"]["episodes"] += 1
            report["overflow"]["steps"] += ep["length"]
        # An open episode continues in its own env when that env exists and is free (the same
        # topology keeps every env's episode in its env); the others take the free envs,
        # newest first; the rest cannot continue.
        carried = [ep for ep in ranks[r] if ep["carry"]][::-1]  # newest first
        taken = set()
        for ep in carried:
            if ep["src_env"] < num_envs and ep["src_env"] not in taken:
                ep["env"] = ep["src_env"]
                taken.add(ep["env"])
        free = [env for env in range(num_envs) if env not in taken]
        for ep in carried:
            if "env" not in ep and free:
                ep["env"] = free.pop(0)
            if "env" in ep:
                report["carried"] += 1
            else:
                ep["carry"] = False
                report["uncarried_open"] += 1
        for j, ep in enumerate(ranks[r]):
            ep.setdefault("env", ep["src_env"] if ep["src_env"] < num_envs else j % num_envs)
            if ep["truncate"]:
                report["truncated"]["episodes"] += 1
                report["truncated"]["steps"] += ep["length"]
    report["sizes"] = [int(x) for x in loads]
    return {"ranks": ranks, "next_counter": next_counter, "report": report}


def build_rank(
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    schema: Schema,
    episodes: List[Dict[str, Any]],
    storage_arrays: Dict[str, np.ndarray],
    prioritized: bool,
) -> np.ndarray:
    """Copy the planned episodes into ``storage_arrays`` (slots 0..n-1, in plan order).

    Returns the priorities of the placed items (ones when the source had none).
    """
    n = sum(ep["length"] for ep in episodes)
    prio = np.ones(n, dtype=np.float64)
    pos = 0
    dest_of: Dict[int, List[np.ndarray]] = {}
    src_of: Dict[int, List[np.ndarray]] = {}
    for ep in episodes:
        k = ep["length"]
        dst = np.arange(pos, pos + k)
        storage_arrays["_env_id"][dst] = ep["env"]
        dest_of.setdefault(ep["shard"], []).append(dst)
        src_of.setdefault(ep["shard"], []).append(np.asarray(ep["slots"], dtype=np.int64))
        pos += k
    dedup = shards[min(shards)].get("dedup") or {} if shards else {}
    exc: Dict[str, List[Any]] = {nxt: [[], []] for nxt in dedup}
    for m in sorted(src_of):
        src = np.concatenate(src_of[m])
        dst = np.concatenate(dest_of[m])
        srt = np.argsort(src, kind="stable")
        src, dst = src[srt], dst[srt]
        small = read_arrays(snap_dir, shards[m])
        if prioritized and "priority" in small:
            prio[dst] = small["priority"][src]
        for nxt in dedup:  # map this shard's TED exceptions to their new slots
            slots, values = small[f"ted-{nxt}-slots"], small[f"ted-{nxt}-values"]
            pos = np.searchsorted(src, slots)
            hit = (pos < src.size) & (src[np.minimum(pos, src.size - 1)] == slots)
            exc[nxt][0].append(dst[pos[hit]])
            exc[nxt][1].append(values[hit])
        for seg in shards[m]["segments"]:
            lo, hi = np.searchsorted(src, [seg["start"], seg["end"]])
            if lo == hi:
                continue
            n_seg = seg["end"] - seg["start"]
            names = shards[m].get("segment_fields")
            tmp = {f.name: np.empty((n_seg, *f.shape), dtype=f.dtype) for f in segment_fields(schema, names)}
            read_segment_into(store, seg, schema, tmp, offset=0, names=names)
            rows = src[lo:hi] - seg["start"]
            for name, arr in tmp.items():
                if name == "_env_id":
                    continue
                storage_arrays[name][dst[lo:hi]] = arr[rows]
    if dedup:
        succ = ted.successors(storage_arrays["_episode_id"][:n], storage_arrays["_step"][:n])
        ted.restore(
            storage_arrays,
            dedup,
            n,
            succ,
            {
                k: (
                    np.concatenate(v[0]) if v[0] else np.zeros(0, np.int64),
                    np.concatenate(v[1])
                    if v[1]
                    else np.zeros((0, *schema.fields[k].shape), schema.fields[k].dtype),
                )
                for k, v in exc.items()
            },
        )
    for ep_start, ep in zip(np.cumsum([0] + [e["length"] for e in episodes])[:-1], episodes):
        if ep["truncate"]:
            last = int(ep_start + ep["length"] - 1)
            storage_arrays["_flags"][last] |= FLAG_TRUNCATED
            for name in TRUNCATION_FIELDS:
                if name in schema.fields and schema.fields[name].dtype.kind == "b":
                    storage_arrays[name][last] = True
    return prio


def load_resharded(
    buf: "ReplayBuffer",
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    rank: int,
    world_size: int,
    policy: Dict[str, str],
    on_overflow: str = "drop_oldest",
) -> Dict[str, Any]:
    """Load this rank's part of an M-shard snapshot into ``buf`` (N = ``world_size``)."""
    if not shards:
        raise ReplayBufferError(
            f"No shard of {snap_dir} could be read",
            expected="shards",
            found="none",
            fix="restore the shard files",
        )
    first = shards[min(shards)]
    schema = check_compatible(buf, first, snap_dir, same_capacity=False)
    metas = {}
    for m in sorted(shards):
        check_compatible(buf, shards[m], snap_dir / fmt.shard_file(m), same_capacity=False)
        metas[m] = read_meta(store, shards[m], schema)
    result = plan(shards, metas, world_size, buf.capacity, buf.num_envs, policy, on_overflow)
    mine = result["ranks"][rank]
    storage = buf.storage.new_like().allocate(schema, buf.capacity)
    prioritized = buf.sampler_kind == "prioritized"
    try:
        prio = build_rank(store, snap_dir, shards, schema, mine, storage.arrays, prioritized)
        n = len(prio)
        sampler = type(buf.sampler)(buf.capacity, **first["sampler"]["params"])
        if prioritized:
            state = dict(first["sampler"]["state"])
            state["max_priority"] = float(prio.max()) if n else sampler.initial_priority
            sampler.load_state(state, {"priority": prio}, n)
        tracker = ep_mod.EpisodeTracker(buf.num_envs, origin=rank)
        tracker.next_counter = result["next_counter"]
        pos = 0
        for ep in mine:
            pos += ep["length"]
            if ep["carry"]:
                tracker.current[ep["env"]] = ep["id"]
                tracker.step[ep["env"]] = int(storage.arrays["_step"][pos - 1]) + 1
        seed = first.get("seed")
        entropy = int(seed) if isinstance(seed, int) else 0
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(rank,)))
    except BaseException:
        storage.close()
        raise
    with buf.lock:
        old = buf.storage
        buf.schema = schema
        buf.storage, buf.sampler, buf.rng, buf.episodes = storage, sampler, rng, tracker
        buf._size, buf._cursor, buf.write_count = n, n % buf.capacity, n
        buf.chunk_slots = max(1, buf.segment_bytes // max(1, schema.item_bytes))
        buf.chunk_ver = np.zeros(-(-buf.capacity // buf.chunk_slots), dtype=np.int64)
        buf.generation += 1
        buf.session = uuid.uuid4().hex[:10]
        buf.rank, buf.world_size = rank, world_size
        buf.persisted.clear()
    old.close()
    return {
        "snapshot": str(snap_dir),
        "mode": "resharded",
        "rank": rank,
        "world_size": world_size,
        "source_world_size": len(shards),
        "size": n,
        "report": result["report"],
    }


def reshard_snapshot(
    src: Any,
    dst: Any,
    world_size: int,
    capacity: Optional[int] = None,
    num_envs: Optional[int] = None,
    episode_policy: Optional[Dict[str, str]] = None,
    snapshot_id: Optional[str] = None,
    snapshot: Optional[str] = None,
    allow_missing_shards: bool = False,
    operation: str = "reshard",
) -> Dict[str, Any]:
    """Offline M -> N: read a snapshot, write a new N-shard snapshot into the store ``dst``.

    Sources are copied, never moved; the new manifest records its provenance (``operation``:
    what the tool was asked, ``merge``, ``split`` or ``reshard``). The default per-rank
    capacity keeps the total (the sources' capacities summed, divided over the N ranks), grown
    when a rank needs more, so nothing is dropped and a merged buffer keeps its headroom.
    """
    from RLA.replay_buffer.buffer import ReplayBuffer
    from RLA.replay_buffer.snapshot.commit import Committer
    from RLA.replay_buffer.snapshot.save import next_seq, publish
    from RLA.replay_buffer.snapshot.shard_io import capture, live_source, write_shard
    from RLA.replay_buffer.snapshot.staging import release

    store, snap_dir, manifest = fmt.resolve(src, snapshot)
    shards = validate.read_shards(snap_dir, manifest, allow_missing_shards)
    first = shards[min(shards)]
    schema = Schema.from_json(first["schema"]) if first.get("schema") else None
    if schema is None:
        raise ReplayBufferError(
            f"{snap_dir} holds no data",
            expected="a non-empty snapshot",
            found="an empty buffer",
            fix="nothing to reshard",
        )
    policy = ep_mod.check_policy(episode_policy)
    envs = int(num_envs or first["episodes"]["num_envs"])
    metas = {m: read_meta(store, shards[m], schema) for m in sorted(shards)}
    cap = int(capacity or -(-sum(int(sh["capacity"]) for sh in shards.values()) // world_size))
    if capacity is None:
        probe = plan(shards, metas, world_size, 1 << 62, envs, policy)
        cap = max(cap, max(probe["report"]["sizes"] or [0]))
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    seq = next_seq(dst)
    snap_id = snapshot_id or f"snap-{seq:08d}"
    staging = Committer().staging(dst, snap_id)
    provenance = {
        "operation": operation,
        "source": str(snap_dir.resolve()),
        "source_snapshot_id": manifest.get("snapshot_id"),
        "source_world_size": int(manifest["world_size"]),
        "world_size": world_size,
    }
    try:
        for r in range(world_size):
            buf = ReplayBuffer(
                cap,
                schema,
                sampler=first["sampler"]["kind"],
                sampler_options=first["sampler"]["params"],
                num_envs=envs,
                seed=first.get("seed"),
                rank=r,
                world_size=world_size,
            )
            with buf:
                out = load_resharded(buf, store, snap_dir, shards, r, world_size, policy)
                provenance["report"] = out["report"]
                with buf.lock:
                    c = capture(buf, dst, r, world_size, incremental=False, dedup=first.get("dedup"))
                    with live_source(buf, c.header["segment_fields"]) as source:
                        write_shard(c, staging, buf.session, source)
        target = publish(dst, staging, snap_id, seq, world_size, provenance=provenance)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        release(staging)
    report = provenance["report"]
    return {"snapshot": str(target), "report": report, "capacity": cap}
