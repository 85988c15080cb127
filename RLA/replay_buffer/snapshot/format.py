"""The on-disk snapshot format: names, manifests, checksums and verified file I/O.

A *store* directory holds immutable segments shared by its snapshots and one directory per
published snapshot::

    <store>/segments/r<rank>/c<chunk>-<session>-<version>.seg   immutable, never rewritten
    <store>/<snapshot_id>/MANIFEST.json                          written last (global)
    <store>/<snapshot_id>/rank-<rank>.json                       one shard manifest per rank
    <store>/<snapshot_id>/rank-<rank>/<array>.bin                small per-shard arrays
    <store>/.staging-<snapshot_id>-<token>/                      a save in progress

A snapshot becomes visible only when its staging directory is renamed to ``<snapshot_id>``
after every file (and MANIFEST.json last) was fsync'd. Every file is listed with its size and
CRC-32; no file is ever unpickled. Inside a segment file, see segment_layout.py.
"""
from __future__ import annotations

import ctypes
import functools
import importlib
import json
import os
import sys
import warnings
import zlib
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from RLA.errors import CorruptSnapshotError, ReplayBufferError

FORMAT = "rla-replay-snapshot"
FORMAT_VERSION = 2  # 2: padded segment layout (field offsets); 1 is still read
MANIFEST = "MANIFEST.json"
SEGMENTS = "segments"
STAGING_PREFIX = ".staging-"
CHECKSUM = "crc32"
READ_BLOCK = 64 << 20
IOV_MAX = 512
MAX_WRITE = 1 << 30  # Linux moves at most ~2 GiB per call
#: Field chunks of at least this many bytes start, in a format 2 segment file, at an offset
#: congruent to their destination in a page-aligned array (mod ALIGN_TO), so a cold load can
#: read them in place with O_DIRECT (see direct_read.py).
ALIGN_MIN_BYTES = 64 << 10
ALIGN_TO = 4096
#: Read cold snapshot files with O_DIRECT (see direct_read.py). On by default;
#: ``RLA_REPLAY_DIRECT_IO=0`` turns it off (every file then goes through the page cache).
DIRECT_READS = os.environ.get("RLA_REPLAY_DIRECT_IO", "1") != "0" and \
    hasattr(os, "O_DIRECT") and hasattr(os, "preadv")


def shard_file(rank: int) -> str:
    return f"rank-{rank:05d}.json"


def shard_dir(rank: int) -> str:
    return f"rank-{rank:05d}"


def segment_dir(rank: int) -> str:
    return f"{SEGMENTS}/r{rank:05d}"


@functools.lru_cache(maxsize=None)
def crc32_impl() -> Tuple[str, Callable[..., int]]:
    """The fastest installed CRC-32 with zlib's polynomial and values: ``(name, function)``.

    ``isal`` and ``zlib-ng`` (optional, PCLMUL-accelerated, ~30 GB/s against zlib's 2-4.5 GB/s
    on the benchmark VM) compute the very same checksum as ``zlib.crc32``, so the format does
    not depend on which one wrote a file. Each candidate is checked on the standard test
    vector before it is trusted.
    """
    for module in ("isal.isal_zlib", "zlib_ng.zlib_ng"):
        try:
            fn = importlib.import_module(module).crc32
            if fn(b"123456789") == 0xCBF43926 and fn(b"89", fn(b"1234567")) == 0xCBF43926:
                return module.split(".")[0], fn
        except Exception:  # noqa: BLE001 - missing or broken accelerator: fall back to zlib
            continue
    return "zlib", zlib.crc32


def crc32(data: Any, crc: int = 0) -> int:
    """CRC-32 of a bytes-like object (releases the GIL on large buffers)."""
    return crc32_impl()[1](data, crc) & 0xFFFFFFFF


def crc_of(views: Iterable[memoryview], crc: int = 0) -> int:
    for view in views:
        crc = crc32(view, crc)
    return crc


def as_bytes_view(arr: np.ndarray) -> memoryview:
    """A flat byte view of a C-contiguous array (no copy)."""
    return memoryview(np.ascontiguousarray(arr)).cast("B") if arr.size else memoryview(b"")


@functools.lru_cache(maxsize=None)
def _sync_file_range() -> Optional[Callable[[int], None]]:
    """``sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`` where libc has it (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return lambda fd: fn(fd, 0, 0, 2)


def start_writeback(fd: int) -> None:
    """Ask the kernel to start writing ``fd``'s dirty pages now, without waiting.

    Only a hint (durability still comes from :func:`fsync_paths`): the disk starts streaming
    while the next files are written, so the fsyncs batched at the end find little to do.
    """
    fn = _sync_file_range()
    if fn is not None:
        fn(fd)


def consume(pending: List[memoryview], n: int) -> None:
    """Drop the first ``n`` bytes from the buffers of a vectored I/O call (in place)."""
    while n:
        if n >= len(pending[0]):
            n -= len(pending.pop(0))
        else:
            pending[0] = pending[0][n:]
            n = 0


def write_views(path: Path, views: Sequence[memoryview], exclusive: bool = True,
                crc_pool: Optional[Executor] = None, writeback: bool = False) -> Tuple[int, int]:
    """Write ``views`` back to back into a new file; return ``(bytes, crc32)`` (no fsync).

    One ``writev`` from the caller's memory (no intermediate copy). With ``crc_pool`` the
    checksum is computed in that pool while this thread writes (both release the GIL); it
    is always computed from the same memory the file was written from. ``writeback`` starts
    the disk write at once (see :func:`start_writeback`).
    """
    views = [v for v in views if len(v)]
    total = sum(len(v) for v in views)
    crc_future = crc_pool.submit(crc_of, views) if crc_pool is not None and views else None
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | \
        (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o666)
    try:
        pending = list(views)
        while pending:  # writev may be short: drop what was written and go on
            batch = pending[:IOV_MAX]
            n = os.writev(fd, batch) if len(batch) > 1 else os.write(fd, batch[0][:MAX_WRITE])
            consume(pending, n)
        if writeback and total:
            start_writeback(fd)
    finally:
        os.close(fd)
        crc = crc_future.result() if crc_future is not None else None
    return total, crc if crc is not None else crc_of(views)


def _fsync_one(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        # data and the metadata needed to read it back (size, blocks): enough for new files
        (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)
    finally:
        os.close(fd)


def fsync_paths(paths: Iterable[Path], pool: Optional[Executor] = None) -> None:
    """fsync files already written (batched at the end so the disk streams).

    With ``pool`` the calls run concurrently: ext4 then commits them in shared journal
    transactions instead of one commit per file.
    """
    paths = list(paths)
    if pool is None or len(paths) < 2:
        for path in paths:
            _fsync_one(path)
        return
    for future in [pool.submit(_fsync_one, path) for path in paths]:
        future.result()


def prefetch(path: Path) -> None:
    """Ask the kernel to start reading ``path`` into the page cache (a hint; errors ignored)."""
    if not hasattr(os, "posix_fadvise"):
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # reported by the verified read
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def ended_early(path: Path, size: int, done: int) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot file {path} ended early", expected=f"{size} bytes",
                                found=f"{done} bytes", fix="load an older snapshot")


def bad_checksum(path: Path, crc: int, actual: int) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot file {path} fails its checksum",
                                expected=f"{CHECKSUM} {crc:08x}", found=f"{actual:08x}",
                                fix="the file is damaged; load an older snapshot or re-save")


def read_verified(path: Path, views: Sequence[memoryview], size: int, crc: int,
                  direct: Optional[bool] = None, in_place: bool = True) -> None:
    """Read ``path`` into ``views`` (total ``size`` bytes), checking size and CRC-32.

    ``direct`` (default :data:`DIRECT_READS`) reads a file that is not in the page cache
    with O_DIRECT (see ``direct_read.read_direct``); cached files and file systems without
    O_DIRECT take plain reads straight into ``views``. ``in_place`` (anonymous memory only)
    lets O_DIRECT write into ``views`` where they line up. The views hold unverified bytes when this
    raises: read into memory that is discarded on error.

    Raises:
        CorruptSnapshotError: missing, truncated or longer file, or checksum mismatch.
    """
    try:
        actual = os.stat(path).st_size
    except FileNotFoundError:
        raise CorruptSnapshotError(f"Snapshot file {path} is missing",
                                   expected="every file listed in the manifest", found="no file",
                                   fix="restore the file or load an older snapshot") from None
    if actual != size:
        raise CorruptSnapshotError(f"Snapshot file {path} has the wrong size",
                                   expected=f"{size} bytes", found=f"{actual} bytes",
                                   fix="the file is truncated or altered; load an older snapshot")
    if (DIRECT_READS if direct is None else direct) and size >= ALIGN_TO and \
            sum(len(v) for v in views) == size:
        from RLA.replay_buffer.snapshot import direct_read
        if direct_read.read_direct(path, views, size, crc, in_place):
            return
    done = 0
    with open(path, "rb", buffering=0) as handle:
        for view in views:
            n = len(view)
            pos = 0
            while pos < n:
                k = handle.readinto(view[pos:min(n, pos + READ_BLOCK)])
                if not k:
                    raise ended_early(path, size, done + pos)
                pos += k
            done += n
    actual_crc = crc_of(views)
    if actual_crc != crc:
        raise bad_checksum(path, crc, actual_crc)


def read_json_verified(path: Path, size: Optional[int] = None, crc: Optional[int] = None) -> Any:
    """Parse a JSON file of the snapshot, optionally checking its size and CRC-32."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CorruptSnapshotError(f"Snapshot file {path} is missing",
                                   expected="a file listed by the manifest", found="no file",
                                   fix="restore it or load an older snapshot") from None
    if size is not None and len(data) != size:
        raise CorruptSnapshotError(f"Snapshot file {path} has the wrong size",
                                   expected=f"{size} bytes", found=f"{len(data)} bytes",
                                   fix="load an older snapshot")
    if crc is not None and crc32(data) != crc:
        raise CorruptSnapshotError(f"Snapshot file {path} fails its checksum",
                                   expected=f"{CHECKSUM} {crc:08x}",
                                   found=f"{crc32(data):08x}", fix="load an older snapshot")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptSnapshotError(f"Snapshot file {path} is not valid JSON",
                                   expected="a JSON document", found=str(exc),
                                   fix="load an older snapshot") from exc


def read_manifest(snap_dir: Path) -> Dict[str, Any]:
    """Read and version-check ``<snap_dir>/MANIFEST.json``."""
    manifest = read_json_verified(snap_dir / MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CorruptSnapshotError(f"{snap_dir / MANIFEST} is not an RLA replay snapshot manifest",
                                   expected=f"format {FORMAT!r}",
                                   found=repr(manifest.get("format") if isinstance(manifest, dict)
                                              else type(manifest).__name__),
                                   fix="point at a directory written by ReplayBuffer.dumps")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CorruptSnapshotError(
            f"{snap_dir / MANIFEST} uses snapshot format version {version!r}",
            expected=f"format_version <= {FORMAT_VERSION}", found=repr(version),
            fix="upgrade RLA to read snapshots written by a newer version")
    return manifest


def list_snapshots(store: Path) -> List[Tuple[int, float, str, Path]]:
    """Published snapshots of ``store`` whose manifest parses, oldest first.

    Returns ``(seq, created, id, path)`` tuples; unreadable ones are skipped here (loading
    one explicitly reports why).
    """
    found = []
    if not store.is_dir():
        return found
    for entry in store.iterdir():
        if entry.name.startswith(".") or entry.name == SEGMENTS or not entry.is_dir():
            continue
        if not (entry / MANIFEST).is_file():
            continue
        try:
            manifest = read_manifest(entry)
        except CorruptSnapshotError:
            continue
        found.append((int(manifest.get("seq", 0)), float(manifest.get("created", 0.0)),
                      entry.name, entry))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return found


def resolve(path: Any, snapshot: Optional[str] = None) -> Tuple[Path, Path, Dict[str, Any]]:
    """Find ``(store, snapshot dir, manifest)`` from a store or a snapshot directory."""
    path = Path(path)
    if (path / MANIFEST).is_file() and snapshot is None:
        return path.parent, path, read_manifest(path)
    if not path.is_dir():
        raise ReplayBufferError(f"No replay snapshot store at {path}",
                                expected="a directory written by dumps()", found="nothing there",
                                fix="check the path")
    if snapshot is not None:
        snap = path / snapshot
        if not (snap / MANIFEST).is_file():
            raise ReplayBufferError(f"No snapshot {snapshot!r} in {path}",
                                    expected=f"one of {[s[2] for s in list_snapshots(path)]}",
                                    found="no such published snapshot",
                                    fix="pick an existing snapshot id")
        return path, snap, read_manifest(snap)
    snaps = list_snapshots(path)
    unreadable = sorted(p for p in path.iterdir() if not p.name.startswith(".") and
                        (p / MANIFEST).is_file())
    if not snaps and unreadable:
        read_manifest(unreadable[-1])  # raises why the newest one cannot be read
    if not snaps:
        raise ReplayBufferError(f"No complete snapshot in {path}",
                                expected="a published snapshot (a directory with MANIFEST.json)",
                                found=f"{sorted(p.name for p in path.iterdir())[:8]}",
                                fix="save one with dumps() first")
    snap = snaps[-1][3]
    return path, snap, read_manifest(snap)


def read_shards(snap_dir: Path, manifest: Dict[str, Any],
                allow_missing: bool = False) -> Dict[int, Dict[str, Any]]:
    """Read and verify every shard manifest listed by ``manifest``; warn about extra files."""
    shards: Dict[int, Dict[str, Any]] = {}
    listed = {MANIFEST}
    for entry in manifest.get("shards", []):
        listed.add(entry["file"])
        listed.add(shard_dir(int(entry["rank"])))
        path = snap_dir / entry["file"]
        if not path.exists() and allow_missing:
            warnings.warn(f"replay snapshot {snap_dir}: shard {entry['file']} is missing; "
                          f"its data is lost (allow_missing_shards=True)", stacklevel=3)
            continue
        if not path.exists():
            raise CorruptSnapshotError(
                f"Snapshot shard {path} is missing",
                expected=f"{manifest.get('world_size')} shards", found=f"no {entry['file']}",
                fix="restore the shard, or pass allow_missing_shards=True to accept the loss")
        shards[int(entry["rank"])] = read_json_verified(path, entry["bytes"], entry["crc32"])
    extra = sorted(p.name for p in snap_dir.iterdir() if p.name not in listed)
    if extra:
        warnings.warn(f"replay snapshot {snap_dir}: files not listed in the manifest are "
                      f"ignored: {extra}", stacklevel=3)
    return shards
