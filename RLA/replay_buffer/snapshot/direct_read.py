"""O_DIRECT reads of cold snapshot files, straight into the arrays being restored.

A cold load through the page cache fills every byte twice: once into freshly allocated
page-cache pages, once more into the destination arrays. On the benchmark VM those page-cache
pages cost as much CPU as the destination itself. An O_DIRECT read lets the disk write into
the destination's pages and nothing else.

O_DIRECT needs the file offset, the length and the memory address of each read aligned to
:data:`ALIGN`. Format 2 segments place each large field chunk at a file offset congruent to
its destination's address (see segment_layout.py), so the aligned middle of every
such chunk is read in place. Everything else (chunk heads and tails, padding, small fields,
chunks whose destination does not line up, format 1 files) is read in the same pass into a
pooled scratch buffer and copied. One ``preadv`` covers a whole 4 MiB segment (format 2 or
later).
"""

from __future__ import annotations

import bisect
import ctypes
import errno
import fcntl
import mmap
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

from RLA.replay_buffer.libc import libc_function
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt

#: Offsets, lengths and addresses of O_DIRECT reads (>= any logical block size): the
#: alignment format 2 segments are laid out for.
ALIGN = fmt.ALIGN_TO
#: A scratch buffer: the bytes not read in place (a format 2 segment needs a few pages; a
#: format 1 one is read in several batches). 1 MiB against 8 MiB before: faulting in a fresh
#: 8 MiB buffer per reader thread and load cost a 85 MB load 16% of its speed.
SCRATCH_BYTES = 1 << 20
MIN_IN_PLACE = fmt.ALIGN_MIN_BYTES  # shorter pieces go through the scratch buffer
CACHESTAT = 451  # the cachestat(2) system call (Linux >= 6.5, same number on every arch)

_pool: List[memoryview] = []  # idle scratch buffers, faulted in once, kept for the process
_pool_lock = threading.Lock()


@contextmanager
def scratch() -> Iterator[memoryview]:
    """Borrow a page-aligned, pre-faulted scratch buffer of ``SCRATCH_BYTES`` (one per
    concurrent reader; they are kept and reused by later loads)."""
    with _pool_lock:
        buf = _pool.pop() if _pool else None
    if buf is None or len(buf) != SCRATCH_BYTES:
        region = mmap.mmap(-1, SCRATCH_BYTES)  # anonymous mappings are page-aligned
        for pos in range(0, SCRATCH_BYTES, mmap.PAGESIZE):
            region[pos] = 0
        buf = memoryview(region)
    try:
        yield buf
    finally:
        if len(buf) == SCRATCH_BYTES:
            with _pool_lock:
                _pool.append(buf)


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [
        ("nr_cache", ctypes.c_uint64),
        ("nr_dirty", ctypes.c_uint64),
        ("nr_writeback", ctypes.c_uint64),
        ("nr_evicted", ctypes.c_uint64),
        ("nr_recently_evicted", ctypes.c_uint64),
    ]


def cached_pages(fd: int, size: int) -> int:
    """Pages of the first ``size`` bytes of ``fd`` in the page cache, from ``cachestat(2)``
    (which starts no I/O). Raises OSError where the call is unavailable (before Linux 6.5)."""
    fn = libc_function("syscall")
    if fn is None:
        raise OSError(errno.ENOSYS, "cachestat needs Linux")
    rng, stat = _Range(0, size), _Stat()
    if fn(CACHESTAT, fd, ctypes.byref(rng), ctypes.byref(stat), 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(stat.nr_cache)


def cached(fd: int, size: int) -> bool:
    """True when every page of the file is in the page cache (a plain read is faster then).

    Without ``cachestat(2)`` files count as cold: they are read with O_DIRECT, which is
    correct, only slower for a cached file.
    """
    if not size:
        return True
    try:
        return cached_pages(fd, size) * mmap.PAGESIZE >= size
    except OSError:
        return False


def _address(view: memoryview) -> int:
    return np.frombuffer(view, dtype=np.uint8).ctypes.data


def plan(
    views: Sequence[memoryview], size: int, in_place_ok: bool = True
) -> List[Tuple[int, int, Optional[memoryview]]]:
    """Cut ``[0, size rounded up to ALIGN)`` into ``(lo, hi, target)`` file ranges, in order.

    ``target`` is the slice of a view that the range is read into in place, or None for a
    range read through the scratch buffer. Every bound is a multiple of ALIGN. Without
    ``in_place_ok`` everything goes through the scratch buffer.
    """
    in_place: List[Tuple[int, int, memoryview]] = []
    pos = 0
    for view in views:
        n = len(view)
        if in_place_ok and n >= MIN_IN_PLACE:
            addr = _address(view)
            if (addr - pos) % ALIGN == 0:
                lo = pos + (-addr) % ALIGN
                hi = (pos + n) // ALIGN * ALIGN
                if hi - lo >= ALIGN:
                    in_place.append((lo, hi, view[lo - pos : hi - pos]))
        pos += n
    end = -(-size // ALIGN) * ALIGN
    out: List[Tuple[int, int, Optional[memoryview]]] = []
    pos = 0
    for lo, hi, target in in_place:
        if lo > pos:
            out.append((pos, lo, None))
        out.append((lo, hi, target))
        pos = hi
    if end > pos:
        out.append((pos, end, None))
    return out


class _Copier:
    """Copies file ranges from the scratch buffer to the views that cover the file."""

    def __init__(self, views: Sequence[memoryview]) -> None:
        self.arrays = [np.frombuffer(v, dtype=np.uint8) for v in views if len(v)]
        self.starts = [0]
        for arr in self.arrays:
            self.starts.append(self.starts[-1] + arr.size)

    def copy(self, lo: int, data: np.ndarray) -> None:
        """Place ``data`` (file bytes from offset ``lo``) into the views."""
        i = bisect.bisect_right(self.starts, lo) - 1
        done = 0
        while done < data.size and i < len(self.arrays):
            at = lo + done - self.starts[i]
            m = min(data.size - done, self.arrays[i].size - at)
            np.copyto(self.arrays[i][at : at + m], data[done : done + m])  # releases the GIL
            done += m
            i += 1


def _read_batch(fd: int, path: Path, lo: int, iov: List[memoryview], size: int) -> None:
    """``preadv`` the contiguous file range starting at ``lo`` into ``iov`` (short reads go on
    where they stopped; only the end of the file may come back short)."""
    want = sum(len(v) for v in iov)
    got = 0
    pending = list(iov)
    while pending:
        k = os.preadv(fd, pending[: fio.IOV_MAX], lo + got)
        got += k
        if k == 0 or k % ALIGN:  # end of file
            break
        fio.consume(pending, k)
    if lo + got < min(size, lo + want):
        raise fio.ended_early(path, size, lo + got)


class _Refused(Exception):
    """The device refused an O_DIRECT alignment before anything was read."""


def read_direct(path: Path, views: Sequence[memoryview], size: int, crc: int, in_place: bool = True) -> bool:
    """Read cold ``path`` (``size`` bytes, covered in order by ``views``) with O_DIRECT.

    ``in_place`` lets the disk write straight into ``views`` where they line up: only for
    anonymous memory (a file-backed destination, such as a memmap storage, is filled by
    copying from the scratch buffer). Returns False, having read nothing, when O_DIRECT does
    not apply: the file is cached, the file system refuses it, or an alignment is refused;
    the caller reads it plainly.

    Raises:
        CorruptSnapshotError: the file ends early or fails its CRC-32 (the views then hold
            unverified bytes).
    """
    fd = fio.open_listed(path)
    try:
        if cached(fd, size):
            return False
        try:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_DIRECT)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP):
                return False
            raise
        with scratch() as buf:
            _read_all(fd, path, buf, views, plan(views, size, in_place), size)
    except _Refused:
        return False
    finally:
        os.close(fd)
    actual = fio.crc_of(v for v in views if len(v))
    if actual != crc:
        raise fio.bad_checksum(path, crc, actual)
    return True


def _read_all(
    fd: int,
    path: Path,
    buf: memoryview,
    views: Sequence[memoryview],
    ranges: List[Tuple[int, int, Optional[memoryview]]],
    size: int,
) -> None:
    """Read ``ranges`` in file order: in-place targets directly, the rest through ``buf``
    (then copied into ``views``), one contiguous ``preadv`` per batch."""
    copier = _Copier(views)
    first = True
    while ranges:
        # one batch: in-place targets and scratch slices of one contiguous file range
        lo, used = ranges[0][0], 0
        iov: List[memoryview] = []
        spans: List[Tuple[int, int, int]] = []
        while ranges and len(iov) < fio.IOV_MAX:
            r_lo, r_hi, target = ranges[0]
            if target is not None:
                iov.append(target)
                ranges.pop(0)
                continue
            room = len(buf) - used
            if room < ALIGN:
                break
            take = min(r_hi - r_lo, room)
            iov.append(buf[used : used + take])
            spans.append((r_lo, used, take))
            used += take
            if take == r_hi - r_lo:
                ranges.pop(0)
            else:
                ranges[0] = (r_lo + take, r_hi, None)
        try:
            _read_batch(fd, path, lo, iov, size)
        except OSError as exc:
            if exc.errno == errno.EINVAL and first:
                raise _Refused() from exc  # the plain read handles this file
            raise
        first = False
        for f_lo, at, take in spans:
            n = max(0, min(take, size - f_lo))
            copier.copy(f_lo, np.frombuffer(buf, dtype=np.uint8, count=n, offset=at))
