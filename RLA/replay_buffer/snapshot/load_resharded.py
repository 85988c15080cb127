"""Loading this rank's part of an M-shard snapshot into a buffer of N ranks (the plan's copy).

``sharding.plan`` decides where every episode goes; this module copies the planned episodes
from the source segments into new arrays (verified reads), restores TED fields, priorities,
truncation marks and open episodes, and swaps the result into the buffer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer.schema import FLAG_TRUNCATED, Schema
from RLA.replay_buffer.sharding import Episode, plan
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot.load import Restored, check_compatible, restore_ted, swapping
from RLA.replay_buffer.snapshot.shard_io import read_arrays, read_meta, read_segment_into, segment_fields

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

TRUNCATION_FIELDS = ("truncated", "next.truncated")


def _placement(episodes: List[Episode], env_ids: np.ndarray) -> Dict[int, Tuple[np.ndarray, np.ndarray]]:
    """Per source shard: its planned source slots (ascending) and their destination slots
    (episodes laid out in plan order from slot 0); writes each destination's env id."""
    dest_of: Dict[int, List[np.ndarray]] = {}
    src_of: Dict[int, List[np.ndarray]] = {}
    pos = 0
    for ep in episodes:
        dst = np.arange(pos, pos + ep["length"])
        env_ids[dst] = ep["env"]
        dest_of.setdefault(ep["shard"], []).append(dst)
        src_of.setdefault(ep["shard"], []).append(np.asarray(ep["slots"], dtype=np.int64))
        pos += ep["length"]
    out = {}
    for m in src_of:
        src, dst = np.concatenate(src_of[m]), np.concatenate(dest_of[m])
        srt = np.argsort(src, kind="stable")
        out[m] = (src[srt], dst[srt])
    return out


def _copy_segments(
    store: Path,
    shard: Dict[str, Any],
    schema: Schema,
    src: np.ndarray,
    dst: np.ndarray,
    storage_arrays: Dict[str, np.ndarray],
    direct: Optional[bool],
) -> None:
    """Copy the rows ``src`` (ascending) of the shard's segments to the slots ``dst``."""
    names = shard.get("segment_fields")
    for seg in shard["segments"]:
        lo, hi = np.searchsorted(src, [seg["start"], seg["end"]])
        if lo == hi:
            continue
        n_seg = seg["end"] - seg["start"]
        tmp = {f.name: np.empty((n_seg, *f.shape), dtype=f.dtype) for f in segment_fields(schema, names)}
        read_segment_into(store, seg, schema, tmp, offset=0, names=names, direct=direct)
        rows = src[lo:hi] - seg["start"]
        for name, arr in tmp.items():
            if name != "_env_id":  # the plan's env ids are written already
                storage_arrays[name][dst[lo:hi]] = arr[rows]


def _mark_truncated(storage_arrays: Dict[str, np.ndarray], schema: Schema, episodes: List[Episode]) -> None:
    """Flag the last step of each episode the plan truncates (and its boolean truncated fields)."""
    starts = np.cumsum([0] + [e["length"] for e in episodes])[:-1]
    for ep_start, ep in zip(starts, episodes):
        if ep["truncate"]:
            last = int(ep_start + ep["length"] - 1)
            storage_arrays["_flags"][last] |= FLAG_TRUNCATED
            for name in TRUNCATION_FIELDS:
                if name in schema.fields and schema.fields[name].dtype.kind == "b":
                    storage_arrays[name][last] = True


def _joined(parts: List[np.ndarray], empty: np.ndarray) -> np.ndarray:
    return np.concatenate(parts) if parts else empty


def build_rank(
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    schema: Schema,
    episodes: List[Episode],
    storage_arrays: Dict[str, np.ndarray],
    prioritized: bool,
    direct: Optional[bool] = None,
) -> np.ndarray:
    """Copy the planned episodes into ``storage_arrays`` (slots 0..n-1, in plan order).

    Returns the priorities of the placed items (ones when the source had none).
    """
    n = sum(ep["length"] for ep in episodes)
    prio = np.ones(n, dtype=np.float64)
    dedup = shards[min(shards)].get("dedup") or {} if shards else {}
    exc: Dict[str, Tuple[List[np.ndarray], List[np.ndarray]]] = {nxt: ([], []) for nxt in dedup}
    placement = _placement(episodes, storage_arrays["_env_id"])
    for m in sorted(placement):
        src, dst = placement[m]
        small = read_arrays(snap_dir, shards[m], direct=direct)
        if prioritized and "priority" in small:
            prio[dst] = small["priority"][src]
        for nxt in dedup:  # map this shard's TED exceptions to their new slots
            slots, values = small[f"ted-{nxt}-slots"], small[f"ted-{nxt}-values"]
            pos = np.searchsorted(src, slots)
            hit = (pos < src.size) & (src[np.minimum(pos, src.size - 1)] == slots)
            exc[nxt][0].append(dst[pos[hit]])
            exc[nxt][1].append(values[hit])
        _copy_segments(store, shards[m], schema, src, dst, storage_arrays, direct)
    exceptions = {
        k: (
            _joined(slots, np.zeros(0, np.int64)),
            _joined(values, np.zeros((0, *schema.fields[k].shape), schema.fields[k].dtype)),
        )
        for k, (slots, values) in exc.items()
    }
    restore_ted(storage_arrays, dedup, n, exceptions)
    _mark_truncated(storage_arrays, schema, episodes)
    return prio


def _resharded_state(
    buf: "ReplayBuffer",
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    schema: Schema,
    result: Dict[str, Any],
    rank: int,
    direct: Optional[bool],
) -> Restored:
    """This rank's part of the plan ``result`` in new arrays (closed again on any error)."""
    first, mine = shards[min(shards)], result["ranks"][rank]
    storage = buf.storage.new_like().allocate(schema, buf.capacity)
    prioritized = buf.sampler_kind == "prioritized"
    try:
        prio = build_rank(store, snap_dir, shards, schema, mine, storage.arrays, prioritized, direct)
        n = len(prio)
        sampler = type(buf.sampler)(buf.capacity, **first["sampler"]["params"])
        if prioritized:
            state = dict(first["sampler"]["state"])
            # sampler_kind "prioritized": the registered sampler has an initial priority
            initial = sampler.initial_priority  # type: ignore[attr-defined]
            state["max_priority"] = float(prio.max()) if n else initial
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
    return Restored(schema, storage, sampler, rng, tracker, n, n % buf.capacity, n)


def load_resharded(
    buf: "ReplayBuffer",
    store: Path,
    snap_dir: Path,
    shards: Dict[int, Dict[str, Any]],
    rank: int,
    world_size: int,
    policy: Dict[str, str],
    on_overflow: str = "drop_oldest",
    direct: Optional[bool] = None,
) -> Dict[str, Any]:
    """Load this rank's part of an M-shard snapshot into ``buf`` (N = ``world_size``)."""
    if not shards:
        raise ReplayBufferError(
            f"No shard of {snap_dir} could be read",
            expected="shards",
            found="none",
            fix="restore the shard files",
        )
    schema = check_compatible(buf, shards[min(shards)], snap_dir, same_capacity=False)
    metas = {}
    for m in sorted(shards):
        check_compatible(buf, shards[m], snap_dir / fmt.shard_file(m), same_capacity=False)
        metas[m] = read_meta(store, shards[m], schema)
    result = plan(shards, metas, world_size, buf.capacity, buf.num_envs, policy, on_overflow)
    new = _resharded_state(buf, store, snap_dir, shards, schema, result, rank, direct)
    with swapping(buf, new, rank, world_size):
        pass  # a resharded buffer keeps no segment of the source: the next save writes all
    return {
        "snapshot": str(snap_dir),
        "mode": "resharded",
        "rank": rank,
        "world_size": world_size,
        "source_world_size": len(shards),
        "size": new.size,
        "report": result["report"],
    }
