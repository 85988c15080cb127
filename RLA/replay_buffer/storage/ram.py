"""In-memory storage: one zeroed numpy array per field."""

from __future__ import annotations

import ctypes
import mmap
from typing import Any

import numpy as np

from RLA.replay_buffer.libc import libc_function
from RLA.replay_buffer.storage.base import Storage

# Arrays at least this large get their own anonymous mapping (see RAMStorage).
OWN_MAPPING_BYTES = 1 << 20
MADV_POPULATE_WRITE = 23  # Linux >= 5.14: fault pages in writable without touching them
PAGE = mmap.PAGESIZE


def populate_rows(arr: np.ndarray, start: int, stop: int) -> bool:
    """``MADV_POPULATE_WRITE`` over rows ``[start, stop)`` of a mapping-backed C array.

    The kernel maps the pages without writing to them, so it is safe while other threads
    fill the same rows. Returns False when unsupported (old kernel, not Linux).
    """
    fn = libc_function("madvise", (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int))
    if fn is None or stop <= start or not arr.flags.c_contiguous:
        return False
    row = arr.strides[0] if arr.ndim else arr.itemsize
    lo = arr.ctypes.data + start * row
    hi = arr.ctypes.data + stop * row
    lo -= lo % PAGE  # the mapping starts on a page boundary, so this stays inside it
    return fn(lo, hi - lo, MADV_POPULATE_WRITE) == 0


def anonymous_zeros(shape: tuple, dtype: np.dtype, hugepages: bool = False) -> np.ndarray:
    """A zeroed array in its own anonymous mapping, with or without transparent huge pages.

    The memory is returned to the system when the last view of the array goes away.
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE" if hugepages else "MADV_NOHUGEPAGE", None)
    if nbytes < OWN_MAPPING_BYTES or advice is None or not hasattr(mmap, "MAP_ANONYMOUS"):
        return np.zeros(shape, dtype=dtype)
    region = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.madvise(advice)
    return np.frombuffer(region, dtype=dtype).reshape(shape)


class RAMStorage(Storage):
    """Arrays in process memory (the default).

    Args:
        hugepages: back large arrays with transparent huge pages (the default, as numpy does
            for large arrays): 512x fewer page faults to fill them and a wider TLB reach for
            random gathers. On the benchmark VM, cold loads of an 847 MB snapshot ran at
            2169 MB/s with huge pages against 1903 MB/s with 4 KiB pages (0.25 s of CPU against
            0.48 s), and a 165 MB one at 1770 against 1087 MB/s (bench/RESULTS.md, 3 runs each).
            Huge pages can be slow to get when memory is fragmented and the kernel compacts it
            first (about 1 load in 5 ran at ~1.1 GB/s in A/B tests), and right after a global
            ``drop_caches`` on this VM they faulted in at 0.2-0.4 GB/s. ``False`` keeps 4 KiB
            pages.
    """

    kind = "ram"
    anonymous_memory = True

    def __init__(self, hugepages: bool = True, **options: Any) -> None:
        super().__init__(hugepages=bool(hugepages), **options)

    def _allocate(self, name: str, shape: tuple, dtype: np.dtype) -> np.ndarray:
        return anonymous_zeros(shape, dtype, hugepages=self.options["hugepages"])

    def populate(self, name: str, start: int, stop: int) -> None:
        arr = self.arrays.get(name)
        if arr is not None and arr.nbytes >= OWN_MAPPING_BYTES:  # own page-aligned mapping
            populate_rows(arr, start, stop)
