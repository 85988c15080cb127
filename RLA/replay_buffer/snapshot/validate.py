"""The one check of a snapshot's manifests, before any payload is read or array allocated.

Every reader gets its shard manifests from :func:`read_shards`: ``loads``, the reshard tools,
``TrajectoryReplayBuffer.load_checkpoint``, retention, ``rla buffer inspect`` and
``rla buffer verify`` (which then re-hashes the payload). So ``verify`` refuses everything a
load refuses. Checked here:

- every file name a manifest lists is a plain relative name of the format, resolves inside
  the store, has no symbolic link on its way, and is a regular file of the listed size;
- types, counts and ranges of the shard's numbers (capacity, size, cursor, ranks, envs);
- the schema parses (no object dtype, no reserved field name) and every segment's layout
  adds up to its listed size; the segments tile ``[0, size)``;
- every small array's shape x dtype is exactly its listed size, which is the file's size.

So no allocation is ever larger than the files on disk, or, for the buffer itself, than
:data:`MAX_BUFFER_BYTES`.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

from RLA.errors import CorruptSnapshotError, ReplayBufferError, UnsafePathError
from RLA.replay_buffer.schema import RESERVED, SEP, Schema, dtype_from_json
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot.file_io import read_json_verified
from RLA.replay_buffer.snapshot.segment_layout import chunk_layout
from RLA.replay_buffer.snapshot.validate_state import check_state
from RLA.safe_paths import check_name, safe_join

#: A buffer larger than this could not have existed: it is the user address space of a
#: 64-bit Linux process (128 TiB). A manifest asking for more is corrupt.
MAX_BUFFER_BYTES = 1 << 47
FIX = "the snapshot is damaged or was edited; load an older snapshot"


def corrupt(where: Any, problem: str, expected: str, found: str) -> CorruptSnapshotError:
    return CorruptSnapshotError(
        f"Snapshot manifest {where}: {problem}", expected=expected, found=found, fix=FIX
    )


def listed_file(
    root: Path, rel: Any, nbytes: Any, where: Any, parts: int = 1, first: Optional[str] = None
) -> Path:
    """``root / rel`` after checking ``rel`` is a relative name of ``parts`` plain components
    (the first one ``first``), inside ``root`` with no link on the way, and that a regular
    file of ``nbytes`` bytes is there (lstat: never followed)."""
    try:
        path = safe_join(root, rel, what="file name") if isinstance(rel, str) else None
    except UnsafePathError as exc:
        raise corrupt(
            where, f"the file name {rel!r} is refused", "plain names inside the store", exc.problem
        ) from None
    count = len(rel.split("/")) if isinstance(rel, str) else 0
    if path is None or count != parts or (first is not None and rel.split("/")[0] != first):
        shape = "/".join([first or "<name>"] + ["<name>"] * (parts - 1))
        raise corrupt(where, f"the file name {rel!r} is refused", f"a name like {shape!r}", repr(rel))
    check_int(nbytes, where, f"the size of {rel}", 0)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise fio.missing(path) from None
    if not stat.S_ISREG(st.st_mode):
        raise corrupt(
            where,
            f"{path} is not a regular file",
            "a regular file (links are not followed)",
            stat.filemode(st.st_mode),
        )
    if st.st_size != nbytes:
        raise CorruptSnapshotError(
            f"Snapshot file {path} has the wrong size",
            expected=f"{nbytes} bytes (listed in the manifest)",
            found=f"{st.st_size} bytes on disk",
            fix="the file is truncated or altered; load an older snapshot",
        )
    return path


def check_listed_once(records: List[Any], where: Any) -> None:
    """Each record is a mapping and no two name the same file (a second listing of one
    segment, checksum and all, would load its items twice)."""
    seen = set()
    for record in records:
        name = record.get("file") if isinstance(record, dict) else None
        if not isinstance(name, str):
            continue  # the record itself is checked by its reader
        if os.path.normpath(name) in seen:
            raise corrupt(
                where, f"the file {name!r} is listed twice", "each segment file once", f"{name!r} again"
            )
        seen.add(os.path.normpath(name))


def check_int(value: Any, where: Any, what: str, lo: int = 0, hi: Optional[int] = None) -> int:
    """``value`` when it is an int within ``[lo, hi]``, else a CorruptSnapshotError."""
    if not isinstance(value, int) or isinstance(value, bool) or value < lo or (hi is not None and value > hi):
        bound = f"an integer >= {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise corrupt(where, f"bad {what}", bound, repr(value)[:80])
    return value


def array_bytes(meta: Any, where: Any, what: str) -> int:
    """Bytes of an array described by ``{"dtype", "shape"}``, checked (no object dtype,
    non-negative dimensions), computed without overflow."""
    try:
        dtype = dtype_from_json(meta["dtype"])
        shape = meta["shape"]
    except (KeyError, TypeError, ValueError) as exc:
        raise corrupt(where, f"bad dtype of {what}", "a numpy dtype", str(exc)[:120]) from None
    if dtype.hasobject or not isinstance(shape, list):
        raise corrupt(
            where,
            f"bad dtype or shape of {what}",
            "a fixed-size dtype and a list shape",
            f"{dtype} {shape!r:.80}",
        )
    total = dtype.itemsize
    for dim in shape:
        total *= check_int(dim, where, f"dimension of {what}")
    return total


def check_schema(shard: Dict[str, Any], where: Any) -> Optional[Schema]:
    """The shard's schema (None for an empty buffer), refused when it does not parse or has
    a field name RLA reserves (see :data:`RLA.replay_buffer.schema.RESERVED`)."""
    data = shard.get("schema")
    if data is None:
        return None
    names = [f.get("name") for f in data if isinstance(f, dict)] if isinstance(data, list) else []
    reserved = [n for n in names if isinstance(n, str) and n.split(SEP)[0] in RESERVED]
    if reserved:  # written before these names were refused: the data is fine, the name is not
        raise ReplayBufferError(
            f"Snapshot {where} has a field named {reserved[0]!r}, a name RLA now reserves",
            expected=f"no field named {' / '.join(RESERVED)} (get() returns each item's "
            f"bookkeeping under these names)",
            found=f"a schema written by RLA {shard.get('library_version')}",
            fix="load it with the RLA version that wrote it, add its items under a renamed "
            "field (e.g. 'step' -> 'env_step') into a new buffer and save that",
        )
    for f in data if isinstance(data, list) else []:
        if isinstance(f, dict) and array_bytes(f, where, f"field {f.get('name')!r}") > MAX_BUFFER_BYTES:
            raise corrupt(
                where,
                f"field {f.get('name')!r} is too large to have been saved",
                f"items of at most {MAX_BUFFER_BYTES} bytes",
                repr(f.get("shape"))[:80],
            )
    try:
        return Schema.from_json(data)
    except (ReplayBufferError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise corrupt(
            where, "bad schema", "a list of {name, dtype, shape} with valid names", str(exc)[:160]
        ) from None


def check_layout(shard: Dict[str, Any], schema: Schema, where: Any) -> List[Any]:
    """The fields stored in segments: all meta fields, every user field but the dedup ones."""
    names = shard.get("segment_fields")
    dedup = shard.get("dedup") or {}
    if not isinstance(dedup, dict) or not set(dedup) | set(dedup.values()) <= set(schema.fields):
        raise corrupt(where, "bad dedup pairs", "{field: field} of the schema", repr(dedup)[:80])
    fields = schema.all_fields()
    if names is None:
        return fields
    expected = [f.name for f in fields if f.name not in dedup]
    if names != expected:
        raise corrupt(where, "bad segment_fields", repr(expected)[:120], repr(names)[:120])
    return [f for f in fields if f.name in set(names)]


def check_segments(store: Path, shard: Dict[str, Any], schema: Optional[Schema], where: Any) -> None:
    """Every segment is a listed file of the store whose layout adds up to its size, and the
    segments tile ``[0, size)`` in order."""
    segments, pos = shard.get("segments", []), 0
    if not isinstance(segments, list) or (segments and schema is None):
        raise corrupt(where, "bad segments", "a list (empty without a schema)", repr(segments)[:80])
    fields = check_layout(shard, schema, where) if schema is not None else []
    check_listed_once(segments, where)
    for seg in segments:
        if not isinstance(seg, dict):
            raise corrupt(where, "bad segment record", "a mapping", repr(seg)[:80])
        check_int(seg.get("crc32"), where, "checksum", 0, 0xFFFFFFFF)
        path = listed_file(store, seg.get("file"), seg.get("bytes"), where, 3, fmt.SEGMENTS)
        start, end = check_int(seg.get("start"), where, "start"), check_int(seg.get("end"), where, "end")
        if start != pos or end <= start:
            raise CorruptSnapshotError(
                f"Shard manifest {where} does not match its segments",
                expected=f"a segment starting at slot {pos}",
                found=f"segment {seg['file']} covering [{start}, {end})",
                fix=FIX,
            )
        chunk_layout(seg, fields, path)
        pos = end
    if pos != shard["size"]:
        raise CorruptSnapshotError(
            f"Shard manifest {where} does not match its segments",
            expected=f"segments covering {shard['size']} items",
            found=f"{pos} items",
            fix=FIX,
        )


def check_arrays(snap_dir: Path, shard: Dict[str, Any], rank: int, where: Any) -> None:
    """Each small array: a file ``rank-<rank>/<name>.bin`` whose shape x dtype is exactly its
    listed size, which is its size on disk."""
    arrays = shard.get("arrays", {})
    if not isinstance(arrays, dict):
        raise corrupt(where, "bad arrays", "a mapping", repr(arrays)[:80])
    for name, meta in arrays.items():
        if not isinstance(meta, dict):
            raise corrupt(where, f"bad array {name!r}", "a mapping", repr(meta)[:80])
        check_int(meta.get("crc32"), where, "checksum", 0, 0xFFFFFFFF)
        listed_file(snap_dir, meta.get("file"), meta.get("bytes"), where, 2, fmt.shard_dir(rank))
        need = array_bytes(meta, where, f"array {name!r}")
        if need != meta["bytes"]:
            raise corrupt(
                where,
                f"array {name!r} does not match its file",
                f"{meta['bytes']} bytes, the size of {meta['file']}",
                f"dtype {meta['dtype']} and shape {meta['shape']!r:.60}: {need} bytes",
            )


def check_buffer_shard(store: Path, snap_dir: Path, shard: Dict[str, Any], rank: int, where: Any) -> None:
    """All of a ReplayBuffer shard manifest that a load relies on (see the module doc)."""
    for key in ("sampler", "episodes"):
        if not isinstance(shard.get(key), dict):
            raise corrupt(where, f"bad {key}", "a mapping", repr(shard.get(key))[:80])
    capacity = check_int(shard.get("capacity"), where, "capacity", 1)
    size = check_int(shard.get("size"), where, "size", 0, capacity)
    check_int(shard.get("cursor"), where, "cursor", 0, capacity - 1)
    check_int(shard.get("write_count"), where, "write_count", size)
    check_int(shard.get("chunk_slots"), where, "chunk_slots", 1)
    envs = check_int(shard["episodes"].get("num_envs"), where, "num_envs", 1, 1 << 24)
    check_state(shard, envs, where)
    schema = check_schema(shard, where)
    if schema is not None and capacity * schema.item_bytes > MAX_BUFFER_BYTES:
        raise corrupt(
            where,
            "the buffer is too large to have been saved",
            f"capacity x item bytes <= {MAX_BUFFER_BYTES} (128 TiB)",
            f"{capacity} x {schema.item_bytes} = {capacity * schema.item_bytes} bytes",
        )
    check_segments(store, shard, schema, where)
    check_arrays(snap_dir, shard, rank, where)


def check_trajectory_shard(store: Path, shard: Dict[str, Any], where: Any) -> None:
    """Each trajectory's segment is a listed file whose fields add up to its size."""
    trajectories = shard.get("trajectories")
    if not isinstance(trajectories, list):
        raise corrupt(where, "bad trajectories", "a list", repr(trajectories)[:80])
    check_listed_once([e.get("segment") if isinstance(e, dict) else e for e in trajectories], where)
    for entry in trajectories:
        seg = entry.get("segment") if isinstance(entry, dict) else None
        if not isinstance(seg, dict) or not isinstance(seg.get("fields"), list):
            raise corrupt(
                where,
                "bad trajectory record",
                "{id, length, segment: {file, bytes, crc32, fields}}",
                repr(entry)[:80],
            )
        length = check_int(entry.get("length"), where, "trajectory length")
        check_int(entry.get("id"), where, "trajectory id")
        check_int(seg.get("crc32"), where, "checksum", 0, 0xFFFFFFFF)
        listed_file(store, seg.get("file"), seg.get("bytes"), where, 3, fmt.SEGMENTS)
        need = 0
        for f in seg["fields"]:
            if not isinstance(f, dict):
                raise corrupt(where, "bad trajectory field", "a mapping", repr(f)[:80])
            check_schema({"schema": [f], "library_version": shard.get("library_version")}, where)
            need += array_bytes(f, where, f"field {f.get('name')!r}")
            if not f["shape"] or f["shape"][0] != length:
                raise corrupt(
                    where,
                    f"field {f['name']!r} does not match its trajectory",
                    f"shape ({length}, ...)",
                    repr(f["shape"])[:80],
                )
        if need != seg["bytes"]:
            raise corrupt(
                where,
                f"trajectory {entry['id']} does not match its file",
                f"fields of {seg['bytes']} bytes, the size of {seg['file']}",
                f"{need} bytes",
            )


def shard_entry(snap_dir: Path, entry: Any, world_size: int) -> Path:
    """The path of one shard manifest MANIFEST.json lists, checked (name, rank, no link)."""
    where = snap_dir / fmt.MANIFEST
    if not isinstance(entry, dict):
        raise corrupt(where, "bad shard entry", "a mapping", repr(entry)[:80])
    rank = check_int(entry.get("rank"), where, "rank", 0, world_size - 1)
    name = entry.get("file")
    try:
        check_name(name, "shard file name")
        path = safe_join(snap_dir, str(name), "shard file name")
    except UnsafePathError as exc:
        raise corrupt(
            where, f"the shard file name {name!r} is refused", "plain names inside the snapshot", exc.problem
        ) from None
    if name != fmt.shard_file(rank):
        raise corrupt(where, "bad shard file name", repr(fmt.shard_file(rank)), repr(name))
    check_int(entry.get("bytes"), where, "shard size")
    check_int(entry.get("crc32"), where, "checksum", 0, 0xFFFFFFFF)
    return path


def read_shards(
    snap_dir: Path, manifest: Dict[str, Any], allow_missing: bool = False
) -> Dict[int, Dict[str, Any]]:
    """Read, verify and check every shard manifest ``manifest`` lists (see the module doc);
    warn about files the snapshot does not list."""
    where = snap_dir / fmt.MANIFEST
    store = snap_dir.parent
    world = check_int(manifest.get("world_size"), where, "world_size", 1, 1 << 20)
    entries = manifest.get("shards")
    if not isinstance(entries, list) or len(entries) != world:
        raise corrupt(where, "bad shard list", f"{world} shards", repr(entries)[:80])
    shards: Dict[int, Dict[str, Any]] = {}
    listed = {fmt.MANIFEST}
    for entry in entries:
        path = shard_entry(snap_dir, entry, world)
        rank = entry["rank"]
        if rank in shards or fmt.shard_file(rank) in listed:
            raise corrupt(where, "a shard is listed twice", "each rank once", f"rank {rank}")
        listed.update((entry["file"], fmt.shard_dir(rank)))
        if not os.path.lexists(path) and allow_missing:
            warnings.warn(
                f"replay snapshot {snap_dir}: shard {entry['file']} is missing; "
                f"its data is lost (allow_missing_shards=True)",
                stacklevel=3,
            )
            continue
        if not os.path.lexists(path):
            raise CorruptSnapshotError(
                f"Snapshot shard {path} is missing",
                expected=f"{world} shards",
                found=f"no {entry['file']}",
                fix="restore the shard, or pass allow_missing_shards=True to accept the loss",
            )
        shard = read_json_verified(path, entry["bytes"], entry["crc32"])
        if not isinstance(shard, dict):
            raise corrupt(path, "not a shard manifest", "a JSON object", type(shard).__name__)
        check_shard(store, snap_dir, shard, rank, path)
        if entry.get("size") is not None and shard.get("size") != entry["size"]:
            raise disagree(
                snap_dir,
                f"size {entry['size']} for rank {rank}",
                f"{path.name} holds {shard.get('size')} items",
            )
        shards[rank] = shard
    if len(shards) == world and manifest.get("episode_report"):
        total = fmt.total_episode_report(shards.values())
        if total != manifest["episode_report"]:
            raise disagree(
                snap_dir, f"episode counts {manifest['episode_report']}", f"the shards sum to {total}"
            )
    extra = sorted(p.name for p in snap_dir.iterdir() if p.name not in listed)
    if extra:
        warnings.warn(
            f"replay snapshot {snap_dir}: files not listed in the manifest are ignored: {extra}", stacklevel=3
        )
    return shards


def check_shard(store: Path, snap_dir: Path, shard: Dict[str, Any], rank: int, where: Any) -> None:
    """Check one shard manifest of either kind (see :func:`read_shards`)."""
    try:
        if shard.get("kind") == "TrajectoryReplayBuffer":
            check_trajectory_shard(store, shard, where)
        else:
            check_buffer_shard(store, snap_dir, shard, rank, where)
    except (KeyError, TypeError, AttributeError) as exc:  # a missing or mistyped entry
        raise corrupt(
            where,
            "an entry is missing or has the wrong type",
            "the entries dumps() writes",
            f"{type(exc).__name__}: {exc}"[:120],
        ) from None


def disagree(snap_dir: Path, listed: str, actual: str) -> CorruptSnapshotError:
    return CorruptSnapshotError(
        f"{snap_dir / fmt.MANIFEST} disagrees with its shard manifests",
        expected=listed,
        found=actual,
        fix="the manifest was altered; load an older snapshot",
    )
