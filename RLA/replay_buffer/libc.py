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


AT_FDCWD = -100
RENAME_EXCHANGE = 2


def rename_exchange(a: Any, b: Any) -> bool:
    """Swap the paths ``a`` and ``b`` in one atomic step (``renameat2(RENAME_EXCHANGE)``).

    Returns False, having changed nothing, where the kernel, C library or file system lacks
    it; other failures raise OSError.
    """
    import errno
    import os

    fn = libc_function(
        "renameat2", (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    )
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(a))
