"""The original ``RLA.trackers.memory_used_recorder``: list the caller's largest variables.

The original inspected its own locals (always empty) and needed TensorFlow; this one looks
at the caller's frame and uses ``sys.getsizeof`` (shallow sizes, like the original meant).
"""

from __future__ import annotations

import inspect
import sys
from typing import List, Tuple


def sizeof_fmt(num: float, suffix: str = "B") -> str:
    """``1536 -> '1.5KiB'``."""
    for unit in ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi"):
        if abs(num) < 1024.0:
            return f"{num:3.1f}{unit}{suffix}"
        num /= 1024.0
    return f"{num:.1f}Yi{suffix}"


def print_large_memory_variable(top: int = 10) -> List[Tuple[str, int]]:
    """Print (to the logger) and return the ``top`` largest local variables of the caller."""
    from RLA.logger import api as logger

    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    names = dict(caller.f_locals) if caller is not None else {}
    del frame, caller
    sizes = sorted(((name, sys.getsizeof(value)) for name, value in names.items()), key=lambda item: -item[1])
    for name, size in sizes[:top]:
        logger.info(f"{name:>30}: {sizeof_fmt(size):>8}")
    return sizes[:top]


__all__ = ["print_large_memory_variable", "sizeof_fmt"]
