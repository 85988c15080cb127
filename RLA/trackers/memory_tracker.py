"""MemoryTracker: resident memory of the process (now and peak) and torch CUDA memory, loggable."""

from __future__ import annotations

import os
import resource
import sys
from typing import Any, Dict, Optional, Sequence

_MB = 1024.0 * 1024.0


def current_rss_bytes() -> Optional[int]:
    """The resident set size of this process now (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_bytes() -> int:
    """The peak resident set size of this process (``getrusage``; KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class MemoryTracker:
    """Snapshot the process' memory use and record it through the logger.

    Example::

        MemoryTracker().log()   # memory/rss_mb, memory/peak_rss_mb (+ memory/cuda_* with torch+CUDA)
    """

    def snapshot(self) -> Dict[str, float]:
        """Memory figures in MiB: ``rss_mb`` (if known), ``peak_rss_mb``, and CUDA ones if torch uses CUDA."""
        out: Dict[str, float] = {}
        rss = current_rss_bytes()
        if rss is not None:
            out["rss_mb"] = rss / _MB
        out["peak_rss_mb"] = peak_rss_bytes() / _MB
        torch = sys.modules.get("torch")  # report CUDA only if the script already uses torch
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            out["cuda_allocated_mb"] = torch.cuda.memory_allocated() / _MB
            out["cuda_reserved_mb"] = torch.cuda.memory_reserved() / _MB
            out["cuda_peak_allocated_mb"] = torch.cuda.max_memory_allocated() / _MB
        return out

    def log(
        self, record: Any = None, prefix: str = "memory/", exclude: Optional[Sequence[str]] = None
    ) -> Dict[str, float]:
        """Record the snapshot as scalars ``<prefix><figure>`` for the next dump (see ``TimeTracker.log``)."""
        if record is None:
            from RLA.logger import api as record
        write = record.record_tabular if hasattr(record, "record_tabular") else record
        flat = {f"{prefix}{k}": v for k, v in self.snapshot().items()}
        for key, value in flat.items():
            if exclude is not None and hasattr(record, "record_tabular"):
                write(key, value, exclude=exclude)
            else:
                write(key, value)
        return flat


#: A process-wide memory tracker.
memory_tracker = MemoryTracker()
