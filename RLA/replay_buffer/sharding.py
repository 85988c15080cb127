"""Redistribution of M snapshot shards into N ranks (episodes whole, balanced, exact priorities).

The plan is a pure function of the shard manifests, their per-slot meta fields and N: it
never depends on directory listing order, splits no episode, balances transitions greedily
(sizes differ by at most one episode), keeps an episode's env id where the destination has
that env free (an open episode continues in its own env) and rewrites the others,
keeps every priority to the bit and keeps episode ids (globally unique) unchanged.

A buffer loads its part with ``snapshot/load_resharded.py``; :func:`reshard_snapshot` (the
``rla buffer reshard`` tool) writes a whole new N-shard snapshot offline.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer.schema import Schema
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.shard_io import (
    read_meta,
    ring_order,
)

Episode = Dict[str, Any]


def _new_report() -> Dict[str, Any]:
    report: Dict[str, Any] = {c: {"episodes": 0, "steps": 0} for c in ep_mod.CLASSES}
    for key in ("dropped", "overflow", "truncated"):
        report[key] = {"episodes": 0, "steps": 0}
    report.update(carried=0, uncarried_open=0)
    return report


def _count(report: Dict[str, Any], key: str, steps: int) -> None:
    report[key]["episodes"] += 1
    report[key]["steps"] += steps


def _shard_episodes(
    m: int, shard: Dict[str, Any], meta: Dict[str, np.ndarray], policy: Dict[str, str], report: Dict[str, Any]
) -> Tuple[List[Episode], int]:
    """The episodes of source shard ``m`` that ``policy`` keeps, and the episode counter it reached."""
    size = int(shard["size"])
    order = ring_order(size, int(shard["cursor"]), int(shard["capacity"]))
    table = ep_mod.episode_table(meta["_episode_id"], meta["_step"], meta["_flags"], order)
    classes = ep_mod.classify(table)
    current = set(int(x) for x in shard["episodes"]["current"] if x >= 0)
    next_counter = int(shard["episodes"]["next_counter"])
    if table["id"].size:
        next_counter = max(next_counter, int(ep_mod.episode_counter(table["id"]).max()) + 1)
    base = int(shard["write_count"]) - size
    kept: List[Episode] = []
    for i in range(table["id"].size):
        cls, n, ident = str(classes[i]), int(table["length"][i]), int(table["id"][i])
        _count(report, cls, n)
        action = policy[cls]
        if action == "drop":
            _count(report, "dropped", n)
            continue
        start = int(table["start"][i])
        slots = table["slots_sorted"][start : start + n]
        kept.append(
            {
                "key": (base + int(table["first_pos"][i]), m, ident),
                "shard": m,
                "slots": slots,
                "length": n,
                "src_env": int(meta["_env_id"][slots[0]]) if n else 0,
                "carry": cls in ("open", "headless_open") and action == "carry" and ident in current,
                "truncate": action == "mark_truncated",
                "id": ident,
            }
        )
    return kept, next_counter


def _balance(
    episodes: List[Episode], world_size: int, capacity: int, on_overflow: str, report: Dict[str, Any]
) -> Tuple[List[List[Episode]], np.ndarray]:
    """Greedy: each episode (oldest first) to the least-loaded rank, ties to the lowest; then
    each rank over ``capacity`` drops its oldest episodes (or raises, with ``on_overflow='error'``)."""
    loads = np.zeros(world_size, dtype=np.int64)
    ranks: List[List[Episode]] = [[] for _ in range(world_size)]
    for ep in episodes:
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
            _count(report, "overflow", ep["length"])
    return ranks, loads


def _place_envs(episodes: List[Episode], num_envs: int, report: Dict[str, Any]) -> None:
    """Give each episode of one rank its env id (``env``).

    An open episode continues in its own env when that env exists and is free (the same
    topology keeps every env's episode in its env); the others take the free envs, newest
    first; the rest cannot continue. Closed episodes keep their env where it exists.
    """
    carried = [ep for ep in episodes if ep["carry"]][::-1]  # newest first
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
    for j, ep in enumerate(episodes):
        ep.setdefault("env", ep["src_env"] if ep["src_env"] < num_envs else j % num_envs)
        if ep["truncate"]:
            _count(report, "truncated", ep["length"])


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
    report = _new_report()
    episodes: List[Episode] = []
    next_counter = 0
    for m in sorted(shards):
        kept, counter = _shard_episodes(m, shards[m], metas[m], policy, report)
        episodes += kept
        next_counter = max(next_counter, counter)
    episodes.sort(key=lambda e: e["key"])
    ranks, loads = _balance(episodes, world_size, capacity, on_overflow, report)
    for placed in ranks:
        _place_envs(placed, num_envs, report)
    report["sizes"] = [int(x) for x in loads]
    return {"ranks": ranks, "next_counter": next_counter, "report": report}


def _source(src: Any, snapshot: Optional[str], allow_missing_shards: bool) -> Tuple[Any, ...]:
    """The source snapshot: store, folder, manifest, shards, first shard and schema."""
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
    return store, snap_dir, manifest, shards, first, schema


def _write_ranks(
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    dst: Path,
    staging: Path,
    world_size: int,
    cap: int,
    envs: int,
    policy: Dict[str, str],
    direct: Optional[bool],
) -> Dict[str, Any]:
    """Build each of the ``world_size`` new ranks in memory and write its shard into ``staging``;
    returns the last rank's report."""
    from RLA.replay_buffer.buffer import ReplayBuffer
    from RLA.replay_buffer.snapshot.load_resharded import load_resharded
    from RLA.replay_buffer.snapshot.shard_io import capture, live_source, write_shard

    first = shards[min(shards)]
    report: Dict[str, Any] = {}
    for r in range(world_size):
        buf = ReplayBuffer(
            cap,
            Schema.from_json(first["schema"]),
            sampler=first["sampler"]["kind"],
            sampler_options=first["sampler"]["params"],
            num_envs=envs,
            seed=first.get("seed"),
            rank=r,
            world_size=world_size,
        )
        with buf:
            report = load_resharded(buf, store, snap_dir, shards, r, world_size, policy, direct=direct)[
                "report"
            ]
            with buf.lock:
                c = capture(buf, dst, r, world_size, incremental=False, dedup=first.get("dedup"))
                with live_source(buf, c.header["segment_fields"]) as source:
                    write_shard(c, staging, buf.session, source)
    return report


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
    direct_reads: Optional[bool] = None,
) -> Dict[str, Any]:
    """Offline M -> N: read a snapshot, write a new N-shard snapshot into the store ``dst``.

    Sources are copied, never moved; the new manifest records its provenance (``operation``:
    what the tool was asked, ``merge``, ``split`` or ``reshard``). The default per-rank
    capacity keeps the total (the sources' capacities summed, divided over the N ranks), grown
    when a rank needs more, so nothing is dropped and a merged buffer keeps its headroom.
    ``direct_reads`` as for :meth:`ReplayBuffer.loads`.
    """
    from RLA.replay_buffer.snapshot.commit import Committer
    from RLA.replay_buffer.snapshot.save import next_seq, publish
    from RLA.replay_buffer.snapshot.staging import release

    store, snap_dir, manifest, shards, first, schema = _source(src, snapshot, allow_missing_shards)
    policy = ep_mod.check_policy(episode_policy)
    envs = int(num_envs or first["episodes"]["num_envs"])
    cap = int(capacity or -(-sum(int(sh["capacity"]) for sh in shards.values()) // world_size))
    if capacity is None:
        metas = {m: read_meta(store, shards[m], schema) for m in sorted(shards)}
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
        provenance["report"] = _write_ranks(
            store, snap_dir, shards, dst, staging, world_size, cap, envs, policy, direct_reads
        )
        target = publish(dst, staging, snap_id, seq, world_size, provenance=provenance)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        release(staging)
    return {"snapshot": str(target), "report": provenance["report"], "capacity": cap}
