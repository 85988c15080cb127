"""One rank's shard of a snapshot: capture the buffer state, write and read its files."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

import numpy as np

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.fs import atomic_write_json, fsync_dir
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer import ted
from RLA.replay_buffer.schema import FieldSpec, Schema, dtype_from_json, dtype_to_json
from RLA.replay_buffer.snapshot import faults
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot.segment_layout import chunk_layout, field_offsets, narrowed, padded, widen
from RLA.version import __version__

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

SAVE_THREADS = 2

ChunkSource = Callable[[int, int, int], ContextManager[List[np.ndarray]]]


def ring_order(size: int, cursor: int, capacity: int) -> np.ndarray:
    """Valid slots from the oldest to the newest item."""
    if size < capacity:
        return np.arange(size, dtype=np.int64)
    return np.concatenate((np.arange(cursor, capacity), np.arange(0, cursor))).astype(np.int64)


def store_key(store: Path, rank: int) -> Tuple[str, int]:
    return (os.path.realpath(store), int(rank))


@dataclass
class Capture:
    """What a save must write, taken under the buffer lock (the point in time)."""

    store: Path
    rank: int
    world_size: int
    header: Dict[str, Any]
    arrays: Dict[str, np.ndarray]
    reuse: Dict[int, Dict[str, Any]]
    todo: List[Tuple[int, int, int, int]]
    written: Dict[int, Dict[str, Any]] = field(default_factory=dict)


def segment_fields(schema: Schema, names: Optional[List[str]] = None) -> List[FieldSpec]:
    """Fields stored in segments, in storage order (all but the TED-deduplicated ones)."""
    fields = schema.all_fields()
    return fields if names is None else [f for f in fields if f.name in set(names)]


def _small_state(
    buf: "ReplayBuffer", dedup: Dict[str, str]
) -> Tuple[Dict[str, np.ndarray], Dict[str, Any], Dict[str, Any]]:
    """Copies of the shard's small arrays (TED exceptions, sampler arrays), the sampler state
    and the episode report. Call under ``buf.lock``."""
    size = len(buf)
    arrays: Dict[str, np.ndarray] = {}
    sampler_state: Dict[str, Any] = {}
    report: Dict[str, Any] = {c: {"episodes": 0, "steps": 0} for c in ep_mod.CLASSES}
    if dedup:
        meta = buf.storage.arrays
        succ = ted.successors(meta["_episode_id"][:size], meta["_step"][:size])
        for name, (slots, values) in ted.exceptions(meta, dedup, size, succ).items():
            arrays[f"ted-{name}-slots"] = slots
            arrays[f"ted-{name}-values"] = values
    if buf.schema is not None:
        sampler_state, sampler_arrays = buf.sampler.state(size)
        arrays.update({name: np.array(arr, copy=True) for name, arr in sampler_arrays.items()})
        meta = buf.storage.arrays
        order = ring_order(size, buf.cursor, buf.capacity)
        report = ep_mod.report(
            ep_mod.episode_table(meta["_episode_id"], meta["_step"], meta["_flags"], order)
        )
    return arrays, sampler_state, report


def _plan_chunks(
    buf: "ReplayBuffer", store: Path, rank: int, incremental: bool, layout: List[str]
) -> Tuple[Dict[int, Dict[str, Any]], List[Tuple[int, int, int, int]]]:
    """Which chunks an earlier save wrote unchanged (reuse) and which to write (chunk, start,
    end, version): a chunk is reused when its version, end and layout match and its file is
    still there with its size."""
    size = len(buf)
    reuse: Dict[int, Dict[str, Any]] = {}
    todo: List[Tuple[int, int, int, int]] = []
    known = buf.persisted.get(store_key(store, rank), {}) if incremental else {}
    k = buf.chunk_slots
    for chunk in range(-(-size // k) if size else 0):
        start, end = chunk * k, min((chunk + 1) * k, size)
        ver = int(buf.chunk_ver[chunk])
        rec = known.get(chunk)
        if (
            rec is not None
            and rec["ver"] == ver
            and rec["end"] == end
            and rec.get("layout") == layout
            and _exists_with_size(store / rec["file"], rec["bytes"])
        ):
            reuse[chunk] = rec
        else:
            todo.append((chunk, start, end, ver))
    return reuse, todo


def capture(
    buf: "ReplayBuffer",
    store: Path,
    rank: int,
    world_size: int,
    incremental: bool,
    dedup: Optional[Dict[str, str]] = None,
) -> Capture:
    """Snapshot the small state and plan which chunks to (re)write. Call under ``buf.lock``."""
    dedup = ted.check_dedup(buf.schema, dedup) if buf.schema is not None else {}
    layout = (
        [f.name for f in buf.schema.all_fields() if f.name not in dedup] if buf.schema is not None else []
    )
    arrays, sampler_state, report = _small_state(buf, dedup)
    header = {
        "kind": "ReplayBuffer",
        "library_version": __version__,
        "rank": rank,
        "world_size": world_size,
        "schema": buf.schema.to_json() if buf.schema else None,
        "capacity": buf.capacity,
        "size": len(buf),
        "cursor": buf.cursor,
        "write_count": buf.write_count,
        "chunk_slots": buf.chunk_slots,
        "storage": buf.storage_kind,
        "episodes": buf.episodes.state(),
        "done_keys": list(buf.done_keys or []) or None,
        "sampler": {"kind": buf.sampler_kind, "params": buf.sampler.params(), "state": sampler_state},
        "rng": buf.rng.bit_generator.state,
        "seed": buf.seed,
        "episode_report": report,
        "return_torch": buf.return_torch,
        "dedup": dedup,
        "segment_fields": layout,
    }
    reuse, todo = _plan_chunks(buf, store, rank, incremental, layout)
    return Capture(store, rank, world_size, header, arrays, reuse, todo)


def _exists_with_size(path: Path, size: int) -> bool:
    try:
        return os.stat(path).st_size == size
    except OSError:
        return False


@contextmanager
def live_source(buf: "ReplayBuffer", names: List[str]) -> Iterator[ChunkSource]:
    """Chunk views straight from the live arrays (synchronous saves hold the lock)."""

    @contextmanager
    def views(chunk: int, start: int, end: int) -> Iterator[List[np.ndarray]]:
        yield [buf.storage.arrays[name][start:end] for name in names]

    yield views


def check_free_space(cap: Capture) -> None:
    """Refuse to start a save that cannot fit (estimated bytes x 1.1), before writing."""
    names = set(cap.header.get("segment_fields") or [])
    schema = Schema.from_json(cap.header["schema"]) if cap.header.get("schema") else None
    item = sum(f.item_bytes for f in schema.all_fields() if f.name in names) if schema else 0
    need = sum((end - start) * item for _, start, end, _ in cap.todo)
    need += sum(arr.nbytes for arr in cap.arrays.values()) + (1 << 20)
    free = shutil.disk_usage(cap.store).free
    if free < need * 1.1:
        raise ReplayBufferError(
            f"Not enough free disk space for a snapshot in {cap.store}",
            expected=f"at least {need * 1.1 / 1e6:.1f} MB free",
            found=f"{free / 1e6:.1f} MB free",
            fix="free some space, use keep_last, or save elsewhere",
        )


def _write_segment(
    cap: Capture, rel: str, chunk: int, start: int, end: int, ver: int, arrays: List[np.ndarray], **io: Any
) -> Path:
    """Write one chunk's rows (narrowed, padded where chunks line up) to the segment ``rel``
    and record it in ``cap.written``; ``io`` are ``fio.write_views``'s pool and writeback."""
    path = cap.store / rel
    stored = [narrowed(a) for a in arrays]
    views = [fio.as_bytes_view(a) for a, _ in stored]
    offsets, _ = field_offsets(
        [len(v) // (end - start) for v in views], start, end - start, [enc is None for _, enc in stored]
    )
    nbytes, crc = fio.write_views(path, padded(views, offsets), **io)
    layout = cap.header["segment_fields"]
    record: Dict[str, Any] = {
        "file": rel,
        "chunk": chunk,
        "start": start,
        "end": end,
        "bytes": nbytes,
        "crc32": crc,
        "ver": ver,
        "layout": layout,
    }
    if nbytes != sum(len(v) for v in views):  # padded: list where each chunk starts
        record["offsets"] = offsets
    narrow = {name: enc for name, (_, enc) in zip(layout, stored) if enc is not None}
    if narrow:
        record["narrow"] = narrow
    cap.written[chunk] = record
    return path


def _write_arrays(cap: Capture, staging: Path, to_sync: List[Path], **io: Any) -> Dict[str, Any]:
    """Write the shard's small arrays into ``staging``; returns their manifest records."""
    arrays_meta: Dict[str, Any] = {}
    if not cap.arrays:
        return arrays_meta
    adir = staging / fmt.shard_dir(cap.rank)
    adir.mkdir(parents=True, exist_ok=True)
    for name, arr in cap.arrays.items():
        path = adir / f"{name}.bin"
        nbytes, crc = fio.write_views(path, [fio.as_bytes_view(arr)], exclusive=False, **io)
        to_sync.append(path)
        arrays_meta[name] = {
            "file": f"{fmt.shard_dir(cap.rank)}/{name}.bin",
            "dtype": dtype_to_json(arr.dtype),
            "shape": list(arr.shape),
            "bytes": nbytes,
            "crc32": crc,
        }
    return arrays_meta


def write_shard(
    cap: Capture, staging: Path, session: str, source: ChunkSource, durable: bool = True
) -> Dict[str, Any]:
    """Write the new segments, the shard arrays and the shard manifest into ``staging``.

    Segment names carry the buffer session, the chunk version and a per-save token, so a
    save never touches a file an earlier snapshot references.
    """
    token = uuid.uuid4().hex[:6]
    seg_rel = fmt.segment_dir(cap.rank)
    (cap.store / seg_rel).mkdir(parents=True, exist_ok=True)
    check_free_space(cap)
    faults.point("replay.save:space-checked")
    to_sync: List[Path] = []
    # Two helper threads: the checksum of a segment is computed while this thread writes it,
    # and at the end the fsyncs run concurrently. Each segment's writeback starts as soon as
    # it is written (sync_file_range), so the disk streams from the first segment on and the
    # final fsyncs mostly wait for the tail.
    with ThreadPoolExecutor(max_workers=SAVE_THREADS, thread_name_prefix="rla-save") as pool:
        for chunk, start, end, ver in cap.todo:
            rel = f"{seg_rel}/c{chunk:07d}-{session}-{ver}-{token}.seg"
            with source(chunk, start, end) as arrays:
                path = _write_segment(
                    cap, rel, chunk, start, end, ver, arrays, crc_pool=pool, writeback=durable
                )
            to_sync.append(path)
        arrays_meta = _write_arrays(cap, staging, to_sync, crc_pool=pool, writeback=durable)
        if durable:
            fio.fsync_paths(to_sync, pool=pool)
    if durable:
        fsync_dir(cap.store / seg_rel)
    records = {**cap.reuse, **cap.written}
    segments = [{k: v for k, v in records[c].items() if k not in ("ver", "layout")} for c in sorted(records)]
    shard = dict(cap.header, segments=segments, arrays=arrays_meta, written_at=time.time())
    atomic_write_json(staging / fmt.shard_file(cap.rank), shard, durable=durable)
    return shard


def read_segment_into(
    store: Path,
    seg: Dict[str, Any],
    schema: Schema,
    arrays: Dict[str, np.ndarray],
    offset: int = 0,
    names: Optional[List[str]] = None,
    in_place: bool = True,
    direct: Optional[bool] = None,
) -> None:
    """Read one verified segment into ``arrays`` at slots ``[offset, offset + n)``.

    ``in_place``: the arrays are anonymous memory, which O_DIRECT may fill directly.
    ``direct``: read a cold file with O_DIRECT (default: ``fio.direct_reads_default()``).
    """
    n = seg["end"] - seg["start"]
    fields = segment_fields(schema, names)
    path = store / seg["file"]
    pieces, pos = [], 0  # the whole file in order: padding (checked by the CRC) and chunks
    narrow = []  # (stored chunk, base, destination): widened once the file is verified
    for f, (off, dtype, base) in zip(fields, chunk_layout(seg, fields, path)):
        if off > pos:
            pieces.append(memoryview(bytearray(off - pos)))
        dest = arrays[f.name][offset : offset + n]
        if base is not None:
            narrow.append((np.empty(dest.shape, dtype=dtype), base, dest))
            dest = narrow[-1][0]
        pieces.append(fio.as_bytes_view(dest) if n else memoryview(b""))
        pos = off + len(pieces[-1])
    fio.read_verified(path, pieces, seg["bytes"], seg["crc32"], direct=direct, in_place=in_place)
    for chunk, base, dest in narrow:
        widen(chunk, base, dest, path)


def read_arrays(
    snap_dir: Path, shard: Dict[str, Any], direct: Optional[bool] = None
) -> Dict[str, np.ndarray]:
    """Read and verify the shard's small arrays (sampler state); ``direct`` as for segments."""
    out: Dict[str, np.ndarray] = {}
    for name, meta in shard.get("arrays", {}).items():
        arr = np.empty(tuple(meta["shape"]), dtype=dtype_from_json(meta["dtype"]))
        view = [fio.as_bytes_view(arr)]
        fio.read_verified(snap_dir / meta["file"], view, meta["bytes"], meta["crc32"], direct=direct)
        out[name] = arr
    return out


def read_meta(store: Path, shard: Dict[str, Any], schema: Schema) -> Dict[str, np.ndarray]:
    """Read only the meta fields of every segment (seek reads; sizes are checked)."""
    size = shard["size"]
    fields = segment_fields(schema, shard.get("segment_fields"))
    meta_names = [f for f in fields if f.name.startswith("_")]
    out = {f.name: np.empty(size, dtype=f.dtype) for f in meta_names}
    for seg in shard["segments"]:
        path = store / seg["file"]
        layout = chunk_layout(seg, fields, path)
        with open(fio.open_listed(path), "rb") as handle:
            actual = os.fstat(handle.fileno()).st_size
            if actual != seg["bytes"]:
                raise CorruptSnapshotError(
                    f"Segment {path} has the wrong size",
                    expected=f"{seg['bytes']} bytes",
                    found=f"{actual} bytes",
                    fix="load an older snapshot",
                )
            for f, (off, dtype, base) in zip(fields, layout):
                if f.name.startswith("_"):
                    dest = out[f.name][seg["start"] : seg["end"]]
                    chunk = dest if base is None else np.empty(dest.shape, dtype=dtype)
                    handle.seek(off)
                    handle.readinto(fio.as_bytes_view(chunk))
                    if base is not None:
                        widen(chunk, base, dest, path)
    return out
