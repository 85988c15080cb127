"""Restore a ReplayBuffer from a snapshot: exact for the same topology, resharded otherwise."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer import ted
from RLA.replay_buffer.schema import Schema
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.shard_io import read_arrays, read_segment_into, segment_fields, store_key
from RLA.replay_buffer.storage.base import Storage

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

READERS = 2
#: O_DIRECT reads are synchronous: the readers are the disk's queue depth. 6 against 3:
#: 1.2x faster loads of the 186 MB state workload on the benchmark VM, the same for 85 MB and
#: 847 MB pixel loads (interleaved A/B, 8-10 repetitions each).
DIRECT_READERS = 6
#: Segments the kernel is asked to fetch ahead of the plain readers. 6 (24 MiB with the
#: default segment size) against 2 before: 1.2-2.2x faster cold loads on the benchmark VM
#: in three interleaved A/B runs (each new 4 MiB file otherwise starts its own short
#: readahead, and the disk idles between files).
PREFETCH_AHEAD = 6


def read_segments(
    store: Path,
    segments: List[Dict[str, Any]],
    schema: Schema,
    storage: Storage,
    names: Optional[List[str]],
    direct: bool,
) -> None:
    """Read and verify ``segments`` into ``storage`` (fresh arrays), overlapping the costs.

    A helper faults the destination rows in ahead of the readers (``Storage.populate``,
    which never writes data). With ``direct`` (the default of a load) ``DIRECT_READERS`` threads
    read cold segments with O_DIRECT, large field chunks straight into RAM arrays (see
    direct_read.py): no page-cache pages to allocate, fill and reclaim, about half the CPU
    of plain reads. Cached segments, and every segment without ``direct``, take
    plain reads: two readers (one's checksum and copy overlap the other's I/O) and a hint to
    the kernel to fetch the next ``PREFETCH_AHEAD`` segments.
    """
    fields = [f.name for f in segment_fields(schema, names)]
    # TED-deduplicated fields are rebuilt after the reads: fault them in alongside too
    touched = fields + [f.name for f in schema.all_fields() if f.name not in fields]
    stop = threading.Event()
    readers = DIRECT_READERS if direct else READERS
    in_place = storage.anonymous_memory

    def populate() -> None:
        for seg in segments:
            for name in touched:
                if stop.is_set():
                    return
                storage.populate(name, seg["start"], seg["end"])

    def read(i: int) -> None:
        if not direct and i + PREFETCH_AHEAD < len(segments):
            fio.prefetch(store / segments[i + PREFETCH_AHEAD]["file"])
        seg = segments[i]
        read_segment_into(
            store, seg, schema, storage.arrays, seg["start"], names, in_place=in_place, direct=direct
        )

    helper = threading.Thread(target=populate, name="rla-load-populate", daemon=True)
    helper.start()
    try:
        with ThreadPoolExecutor(max_workers=readers, thread_name_prefix="rla-load") as pool:
            for seg in segments[: PREFETCH_AHEAD if not direct else 0]:
                fio.prefetch(store / seg["file"])
            for future in [pool.submit(read, i) for i in range(len(segments))]:
                future.result()
    finally:
        stop.set()
        helper.join()


def check_compatible(
    buf: "ReplayBuffer", shard: Dict[str, Any], where: Path, same_capacity: bool = True
) -> Schema:
    """Raise before any mutation if the snapshot cannot go into ``buf``."""
    if shard.get("kind") != "ReplayBuffer":
        raise ReplayBufferError(
            f"{where} is not a ReplayBuffer snapshot",
            expected="kind 'ReplayBuffer'",
            found=repr(shard.get("kind")),
            fix="load it with the matching buffer class",
        )
    if shard.get("schema") is None:
        if buf.schema is None:
            raise ReplayBufferError(
                f"{where} holds an empty buffer without a schema",
                expected="a snapshot with data or a buffer with a schema",
                found="neither",
                fix="declare the schema in the buffer",
            )
        return buf.schema
    schema = Schema.from_json(shard["schema"])
    if buf.schema is not None and buf.schema != schema:
        raise ReplayBufferError(
            f"Snapshot schema of {where} differs from the buffer's",
            expected=repr(buf.schema),
            found=repr(schema),
            fix="build the buffer with the snapshot's schema",
        )
    if same_capacity and int(shard["capacity"]) != buf.capacity:
        raise ReplayBufferError(
            f"Snapshot capacity of {where} differs from the buffer's",
            expected=str(buf.capacity),
            found=str(shard["capacity"]),
            fix="build the buffer with the snapshot's capacity, or load "
            "with episode_policy={} to redistribute it into this one "
            "(episodes that do not fit are dropped, oldest first, and "
            "counted)",
        )
    if shard["sampler"]["kind"] != buf.sampler_kind:
        raise ReplayBufferError(
            f"Snapshot sampler of {where} differs from the buffer's",
            expected=repr(buf.sampler_kind),
            found=repr(shard["sampler"]["kind"]),
            fix="build the buffer with the snapshot's sampler",
        )
    return schema


def restore_ted(
    storage_arrays: Dict[str, np.ndarray],
    dedup: Dict[str, str],
    size: int,
    exceptions: Dict[str, Tuple[np.ndarray, np.ndarray]],
) -> None:
    """Rebuild the TED-deduplicated fields of the first ``size`` slots from each row's
    successor, then put back the stored ``exceptions`` (slots, values) of each field."""
    if not dedup:
        return
    succ = ted.successors(storage_arrays["_episode_id"][:size], storage_arrays["_step"][:size])
    ted.restore(storage_arrays, dedup, size, succ, exceptions)


def restore_dedup(
    storage_arrays: Dict[str, np.ndarray], shard: Dict[str, Any], arrays: Dict[str, np.ndarray], size: int
) -> None:
    """Rebuild TED-deduplicated fields from successors and the shard's stored exceptions."""
    dedup = shard.get("dedup") or {}
    exceptions = {nxt: (arrays[f"ted-{nxt}-slots"], arrays[f"ted-{nxt}-values"]) for nxt in dedup}
    restore_ted(storage_arrays, dedup, size, exceptions)


@dataclass
class Restored:
    """A buffer's new state, read and verified, ready to be swapped in."""

    schema: Schema
    storage: Storage
    sampler: Any
    rng: np.random.Generator
    episodes: ep_mod.EpisodeTracker
    size: int
    cursor: int
    write_count: int


@contextmanager
def swapping(buf: "ReplayBuffer", new: Restored, rank: int, world_size: int) -> Iterator[None]:
    """Put ``new`` in place of the buffer's state under its lock, then close the old storage.

    The buffer starts a new session and forgets its persisted segments; the block runs
    under the lock, after the swap, for what a load sets besides (seed, reused segments).
    """
    with buf.lock:
        old = buf.storage
        buf.schema = new.schema
        buf.storage, buf.sampler, buf.rng, buf.episodes = new.storage, new.sampler, new.rng, new.episodes
        buf._size, buf._cursor, buf.write_count = new.size, new.cursor, new.write_count
        buf.chunk_slots = max(1, buf.segment_bytes // max(1, new.schema.item_bytes))
        buf.chunk_ver = np.zeros(-(-buf.capacity // buf.chunk_slots), dtype=np.int64)
        buf.generation += 1
        buf.session = uuid.uuid4().hex[:10]
        buf.rank, buf.world_size = rank, world_size
        buf.persisted.clear()
        yield
    old.close()


def _read_exact(
    buf: "ReplayBuffer", store: Path, snap_dir: Path, where: Path, shard: Dict[str, Any], direct: bool
) -> Restored:
    """Read and verify the shard (manifest ``where``) into new arrays, closed again on any error."""
    schema = check_compatible(buf, shard, where)
    if int(shard["episodes"]["num_envs"]) != buf.num_envs:
        raise ReplayBufferError(
            f"Snapshot num_envs of {where} differs from the buffer's",
            expected=str(buf.num_envs),
            found=str(shard["episodes"]["num_envs"]),
            fix="build the buffer with the snapshot's num_envs",
        )
    storage = buf.storage.new_like().allocate(schema, buf.capacity)
    try:
        read_segments(store, shard["segments"], schema, storage, shard.get("segment_fields"), direct)
        arrays = read_arrays(snap_dir, shard, direct=direct)
        size = int(shard["size"])
        restore_dedup(storage.arrays, shard, arrays, size)
        sampler = type(buf.sampler)(buf.capacity, **shard["sampler"]["params"])
        sampler.load_state(shard["sampler"]["state"], arrays, size)
        rng = np.random.default_rng()
        rng.bit_generator.state = shard["rng"]
        tracker = ep_mod.EpisodeTracker(buf.num_envs)
        tracker.load_state(shard["episodes"])
    except BaseException:
        storage.close()
        raise
    return Restored(
        schema, storage, sampler, rng, tracker, size, int(shard["cursor"]), int(shard["write_count"])
    )


def exact_load(
    buf: "ReplayBuffer",
    store: Path,
    snap_dir: Path,
    shard: Dict[str, Any],
    rank: int,
    world_size: int,
    direct: bool = True,
) -> Dict[str, Any]:
    """Read one shard into new arrays, verify everything, then swap it in."""
    new = _read_exact(buf, store, snap_dir, snap_dir / fmt.shard_file(rank), shard, direct)
    with swapping(buf, new, rank, world_size):
        buf.seed = shard.get("seed", buf.seed)
        if buf.return_torch is None:
            buf.return_torch = shard.get("return_torch")
        if int(shard["chunk_slots"]) == buf.chunk_slots:  # its segments are reused by the next save
            layout = shard.get("segment_fields") or [f.name for f in new.schema.all_fields()]
            buf.persisted[store_key(store, rank)] = {
                seg["start"] // buf.chunk_slots: dict(seg, ver=0, layout=layout) for seg in shard["segments"]
            }
    return {
        "snapshot": str(snap_dir),
        "mode": "exact",
        "rank": rank,
        "world_size": world_size,
        "size": new.size,
        "episode_report": shard.get("episode_report"),
    }


def load_buffer(
    buf: "ReplayBuffer",
    path: Any,
    snapshot: Optional[str] = None,
    rank: Optional[int] = None,
    world_size: Optional[int] = None,
    episode_policy: Optional[Dict[str, str]] = None,
    allow_missing_shards: bool = False,
    on_overflow: str = "drop_oldest",
    num_envs: Optional[int] = None,
    direct_reads: Optional[bool] = None,
) -> Dict[str, Any]:
    """Load the newest (or the named) snapshot of ``path`` into ``buf``; returns a report.

    ``direct_reads``: read cold segment files with O_DIRECT (default: on where the system
    has it, unless ``RLA_REPLAY_DIRECT_IO=0``; see :func:`fio.direct_reads_default`).
    """
    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    if manifest.get("kind", "ReplayBuffer") != "ReplayBuffer":
        raise ReplayBufferError(
            f"{snap_dir} is a {manifest.get('kind')} snapshot",
            expected="a ReplayBuffer snapshot",
            found=repr(manifest.get("kind")),
            fix="load it with TrajectoryReplayBuffer.load_checkpoint",
        )
    shards = validate.read_shards(snap_dir, manifest, allow_missing_shards)
    world = int(manifest["world_size"])
    world_size = buf.world_size if world_size is None else int(world_size)
    rank = (buf.rank if buf.rank < world_size else 0) if rank is None else int(rank)
    if not 0 <= rank < world_size:
        raise ReplayBufferError(
            "Bad rank for loading",
            expected=f"0 <= rank < {world_size}",
            found=str(rank),
            fix="pass this process's rank and world_size",
        )
    policy = ep_mod.check_policy(episode_policy)
    direct = fio.direct_reads_default() if direct_reads is None else bool(direct_reads)
    if world == world_size and episode_policy is None and len(shards) == world:
        return exact_load(buf, store, snap_dir, shards[rank], rank, world_size, direct)
    from RLA.replay_buffer.snapshot.load_resharded import load_resharded

    return load_resharded(buf, store, snap_dir, shards, rank, world_size, policy, on_overflow, direct)
