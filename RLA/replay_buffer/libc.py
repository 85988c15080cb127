"""Linux system calls that Python's standard library does not wrap, looked up once."""
from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any, Callable, Optional, Tuple


@functools.lru_cache(maxsize=None)
def libc_function(name: str, argtypes: Optional[Tuple[Any, ...]] = None) -> Optional[Callable[..., int]]:
    """libc's ``name`` (errno kept for ``ctypes.get_errno``), or None off Linux or where the C
    library lacks it; callers then fall back to what works everywhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    if argtypes is not None:
        fn.argtypes = list(argtypes)
    return fn
