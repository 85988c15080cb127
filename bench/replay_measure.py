"""How the replay benchmark measures: wall and CPU time, peak extra memory and bytes written of
a call; cold reads (only a snapshot's files evicted from the page cache); and the machine's own
disk and memory limits, measured in the same run as the systems."""
from __future__ import annotations

import gc
import os
import shutil
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

MB = 1e6


def rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def io_written() -> int:
    with open("/proc/self/io") as handle:
        for line in handle:
            if line.startswith("write_bytes"):
                return int(line.split()[1])
    return 0


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def cached_bytes(files: List[Path]) -> Optional[int]:
    """Bytes of ``files`` in the page cache (``cachestat(2)``), or None where unavailable."""
    from RLA.replay_buffer.snapshot import direct_read
    total = 0
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            total += direct_read.cached_pages(fd, f.stat().st_size) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            return None
        finally:
            os.close(fd)
    return total


def cold_method() -> str:
    return "posix_fadvise(DONTNEED), checked with cachestat" if \
        cached_bytes([Path(__file__)]) is not None else "posix_fadvise(DONTNEED) + drop_caches"


def drop_cache(path: Path) -> None:
    """Make the next read of ``path`` cold, and only of ``path``: fsync + POSIX_FADV_DONTNEED
    on its files, checked with ``cachestat(2)``. Everything else stays cached, as on a machine
    that resumes a run (a global ``drop_caches`` would also evict the libraries' code, and
    a big library such as torch then reads its code from disk during the timed load). Without
    cachestat, or if a page stayed, ``drop_caches`` (as root) follows."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    left = cached_bytes(files)
    if left is None or left > 0:
        if not os.access(DROP_CACHES, os.W_OK):
            raise RuntimeError(f"{left} bytes of {path} stay cached and drop_caches needs root")
        os.sync()
        DROP_CACHES.write_text("3\n")


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() \
        else path.stat().st_size


def measure(fn: Callable[[], Any]) -> Dict[str, float]:
    """Wall time, process CPU time (all threads), peak extra RSS (5 ms sampling) and bytes
    written of ``fn()``."""
    gc.collect()
    base, peak, stop = rss(), [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.005)
    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    w0 = io_written()
    c0 = os.times()
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    c1 = os.times()
    stop.set()
    watcher.join()
    peak[0] = max(peak[0], rss())
    return {"s": seconds, "peak_mb": (peak[0] - base) / MB, "written": io_written() - w0,
            "cpu_s": c1.user + c1.system - c0.user - c0.system}


def med(values: List[float]) -> float:
    return float(statistics.median(values))


# --------------------------------------------------------------------------- disk limits
def disk_limits(tmp: Path, nbytes: int, reps: int) -> List[Dict[str, Any]]:
    """The machine's own limits for the same number of bytes, measured between the systems.

    Writes: ``dd conv=fdatasync`` from a cached source (one file, write then one flush) and the
    same bytes as 4 MiB files with writeback started per file and fdatasync at the end (how
    RLA writes, without checksums or metadata: the ceiling for its technique). Reads: ``dd``
    cold (no allocation) and ``np.fromfile`` cold (allocates, numpy asks for huge pages).
    First touch: faulting in fresh anonymous memory with 4 KiB pages and with huge pages, the
    other ceiling of any eager load.
    """
    from RLA.replay_buffer.snapshot import file_io as fio
    from RLA.replay_buffer.storage.ram import anonymous_zeros
    src = tmp / "random.bin"
    np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8).tofile(src)
    rows = []
    out: Dict[str, List[float]] = {
        "dd write (fdatasync)": [], "4 MiB files, writeback + fdatasync": [],
        "dd read (cold)": [], "numpy fromfile (cold)": [], "first touch, 4 KiB pages": [],
        "first touch, huge pages": []}
    data = np.fromfile(src, dtype=np.uint8)
    view = memoryview(data)
    seg = 4 << 20
    for _ in range(reps):
        dst = tmp / "dd.bin"
        subprocess.run(["cat", str(src)], check=True, stdout=subprocess.DEVNULL)  # cached source
        t = measure(lambda: subprocess.run(["dd", f"if={src}", f"of={dst}", "bs=4M",
                                            "conv=fdatasync"], check=True,
                                           capture_output=True))["s"]
        out["dd write (fdatasync)"].append(nbytes / t / MB)
        drop_cache(dst)
        t = measure(lambda: subprocess.run(["dd", f"if={dst}", "of=/dev/null", "bs=4M"],
                                           check=True, capture_output=True))["s"]
        out["dd read (cold)"].append(nbytes / t / MB)
        drop_cache(dst)
        out["numpy fromfile (cold)"].append(
            nbytes / measure(lambda: np.fromfile(dst, dtype=np.uint8))["s"] / MB)
        dst.unlink()
        files = tmp / "files"
        files.mkdir()

        def many_files() -> None:
            paths = []
            for i, lo in enumerate(range(0, nbytes, seg)):
                paths.append(files / f"{i}.seg")
                fio.write_views(paths[-1], [view[lo:lo + seg]], writeback=True)
            with ThreadPoolExecutor(2) as pool:
                fio.fsync_paths(paths, pool=pool)
        out["4 MiB files, writeback + fdatasync"].append(nbytes / measure(many_files)["s"] / MB)
        shutil.rmtree(files)
        for name, huge in (("first touch, 4 KiB pages", False),
                           ("first touch, huge pages", True)):
            time.sleep(3)  # let freed memory go back to the host, as in a fresh process

            def touch() -> None:
                anonymous_zeros((nbytes,), np.uint8, hugepages=huge)[::4096] = 1
            out[name].append(nbytes / measure(touch)["s"] / MB)
    src.unlink()
    for name, values in out.items():
        rows.append({"workload": "disk", "system": name, "MB/s": round(med(values)),
                     "min": round(min(values)), "max": round(max(values))})
    return rows
