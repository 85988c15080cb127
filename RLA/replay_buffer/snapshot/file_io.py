"""Verified file I/O of snapshots: CRC-32, vectored writes, batched fsyncs, verified reads.

Every snapshot file is written from the caller's memory in one vectored write, its CRC-32
computed from that same memory, and read back with its size and CRC-32 checked. Cold files
are read with O_DIRECT where it applies (direct_read.py).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import importlib
import os
import zlib
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from RLA import safe_read
from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer.libc import libc_function

CHECKSUM = "crc32"
READ_BLOCK = 64 << 20
IOV_MAX = 512
MAX_WRITE = 1 << 30  # Linux moves at most ~2 GiB per call
#: The largest manifest read: a shard manifest lists one record (~300 bytes) per segment or
#: trajectory, so 1 GiB is millions of them; anything larger is not RLA's.
MAX_MANIFEST_BYTES = 1 << 30
#: The system can read files with O_DIRECT (see direct_read.py).
DIRECT_IO_AVAILABLE = hasattr(os, "O_DIRECT") and hasattr(os, "preadv")


def direct_reads_default() -> bool:
    """Whether a read that does not say reads cold files with O_DIRECT: yes where the system
    can, unless the environment sets ``RLA_REPLAY_DIRECT_IO=0`` (then every file goes through
    the page cache). Loads take ``direct_reads=`` to decide per call."""
    return DIRECT_IO_AVAILABLE and os.environ.get("RLA_REPLAY_DIRECT_IO", "1") != "0"


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
    """A flat byte view of a C-contiguous array (no copy). Through a uint8 view, because the
    buffer protocol refuses some dtypes (datetime64 / timedelta64)."""
    if not arr.size:
        return memoryview(b"")
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8).data


def start_writeback(fd: int) -> None:
    """Ask the kernel to start writing ``fd``'s dirty pages now, without waiting.

    Only a hint (durability still comes from :func:`fsync_paths`): the disk starts streaming
    while the next files are written, so the fsyncs batched at the end find little to do.
    """
    fn = libc_function("sync_file_range", (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint))
    if fn is not None:
        fn(fd, 0, 0, 2)  # SYNC_FILE_RANGE_WRITE over the whole file


def consume(pending: List[memoryview], n: int) -> None:
    """Drop the first ``n`` bytes from the buffers of a vectored I/O call (in place)."""
    while n:
        if n >= len(pending[0]):
            n -= len(pending.pop(0))
        else:
            pending[0] = pending[0][n:]
            n = 0


def write_views(
    path: Path,
    views: Sequence[memoryview],
    exclusive: bool = True,
    crc_pool: Optional[Executor] = None,
    writeback: bool = False,
) -> Tuple[int, int]:
    """Write ``views`` back to back into a new file; return ``(bytes, crc32)`` (no fsync).

    One ``writev`` from the caller's memory (no intermediate copy). With ``crc_pool`` the
    checksum is computed in that pool while this thread writes (both release the GIL); it
    is always computed from the same memory the file was written from. ``writeback`` starts
    the disk write at once (see :func:`start_writeback`).
    """
    views = [v for v in views if len(v)]
    total = sum(len(v) for v in views)
    crc_future = crc_pool.submit(crc_of, views) if crc_pool is not None and views else None
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o666)
    try:
        pending = list(views)
        while pending:  # writev may be short: drop what was written and go on
            batch = pending[:IOV_MAX]
            n = os.writev(fd, batch) if len(batch) > 1 else os.write(fd, batch[0][:MAX_WRITE])
            consume(pending, n)
        if writeback and total:
            start_writeback(fd)
    except BaseException as exc:
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = os.fspath(path)  # writev does not name the file (a full disk)
        try:
            os.unlink(path)  # a part-written file is never left behind (new or truncated)
        except OSError:
            pass
        raise
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
    return CorruptSnapshotError(
        f"Snapshot file {path} ended early (it shrank while being read)",
        expected=f"{size} bytes",
        found=f"only {done} bytes could be read",
        fix="load an older snapshot",
    )


#: Opens never follow a link at the last component (the earlier ones are checked by the
#: manifest check, validate.py).
NOFOLLOW = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def missing(path: Path) -> CorruptSnapshotError:
    """A file the manifest lists that is not there."""
    return CorruptSnapshotError(
        f"Snapshot file {path} is missing",
        expected="every file listed in the manifest",
        found="no file",
        fix="restore the file or load an older snapshot",
    )


def open_listed(path: Path) -> int:
    """Open a file a manifest lists for reading, without following a symbolic link."""
    try:
        return os.open(path, NOFOLLOW)
    except FileNotFoundError:
        raise missing(path) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise CorruptSnapshotError(
            f"Snapshot file {path} is a symbolic link",
            expected="a regular file (links are not followed)",
            found=f"a link to {os.readlink(path)!r}",
            fix="replace the link by the file itself",
        ) from None


def bad_checksum(path: Path, crc: int, actual: int) -> CorruptSnapshotError:
    return CorruptSnapshotError(
        f"Snapshot file {path} fails its checksum",
        expected=f"{CHECKSUM} {crc:08x}",
        found=f"{actual:08x}",
        fix="the file is damaged; load an older snapshot or re-save",
    )


def read_verified(
    path: Path,
    views: Sequence[memoryview],
    size: int,
    crc: int,
    direct: Optional[bool] = None,
    in_place: bool = True,
) -> None:
    """Read ``path`` into ``views`` (total ``size`` bytes), checking size and CRC-32.

    ``direct`` (default :func:`direct_reads_default`) reads a file that is not in the page cache
    with O_DIRECT (see ``direct_read.read_direct``); cached files and file systems without
    O_DIRECT take plain reads straight into ``views``. ``in_place`` (anonymous memory only)
    lets O_DIRECT write into ``views`` where they line up. The views hold unverified bytes when this
    raises: read into memory that is discarded on error.

    Raises:
        CorruptSnapshotError: missing, truncated or longer file, or checksum mismatch.
    """
    want = sum(len(v) for v in views)
    if want != size:  # the manifest's shapes and its file size disagree
        raise CorruptSnapshotError(
            f"Snapshot file {path} does not match its manifest",
            expected=f"a file of {want} bytes for the listed shapes and dtypes",
            found=f"{size} bytes listed",
            fix="the manifest is damaged; load an older snapshot",
        )
    fd = open_listed(path)
    with open(fd, "rb", buffering=0) as handle:
        actual = os.fstat(fd).st_size
        if actual != size:
            raise CorruptSnapshotError(
                f"Snapshot file {path} has the wrong size",
                expected=f"{size} bytes",
                found=f"{actual} bytes",
                fix="the file is truncated or altered; load an older snapshot",
            )
        if DIRECT_IO_AVAILABLE and (direct_reads_default() if direct is None else direct):
            from RLA.replay_buffer.snapshot import direct_read

            if size >= direct_read.ALIGN and direct_read.read_direct(path, views, size, crc, in_place):
                return
        done = 0
        for view in views:
            n = len(view)
            pos = 0
            while pos < n:
                k = handle.readinto(view[pos : min(n, pos + READ_BLOCK)])
                if not k:
                    raise ended_early(path, size, done + pos)
                pos += k
            done += n
    actual_crc = crc_of(views)
    if actual_crc != crc:
        raise bad_checksum(path, crc, actual_crc)


def read_json_verified(path: Path, size: Optional[int] = None, crc: Optional[int] = None) -> Any:
    """Parse a JSON file of the snapshot, optionally checking its size and CRC-32.

    Read like every file from outside (:mod:`RLA.safe_read`): only a regular file, never
    through a link, without blocking on a FIFO, at most :data:`MAX_MANIFEST_BYTES`, nested at
    most ``safe_read.MAX_JSON_DEPTH`` levels (checked before parsing).

    Raises:
        CorruptSnapshotError: missing, not a regular file, too large or deep, not JSON, or a
            size or checksum that differs from the listed one.
    """
    try:
        data = safe_read.read_bytes(path, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        raise missing(path) from None
    except safe_read.UnreadableFileError as exc:
        raise unreadable(path, exc.reason) from None
    if size is not None and len(data) != size:
        raise CorruptSnapshotError(
            f"Snapshot file {path} has the wrong size",
            expected=f"{size} bytes",
            found=f"{len(data)} bytes",
            fix="load an older snapshot",
        )
    if crc is not None and crc32(data) != crc:
        raise bad_checksum(path, crc, crc32(data))
    try:
        return safe_read.parse_json(path, data)
    except safe_read.UnreadableFileError as exc:
        raise unreadable(path, exc.reason) from None


def unreadable(path: Path, reason: str) -> CorruptSnapshotError:
    """A snapshot file that cannot be read as what it should be (``reason`` says why)."""
    problem = f"is {reason}" if reason.startswith(("not ", "a ")) else f"cannot be read: {reason}"
    return CorruptSnapshotError(
        f"Snapshot file {path} {problem}",
        expected="a regular JSON file written by RLA",
        found=reason,
        fix="load an older snapshot",
    )
