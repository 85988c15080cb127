"""Deterministic fault points of snapshot saves, for crash and full-disk tests.

A save calls :func:`point` at each step whose interruption matters (see the names in
``POINTS``). Nothing happens unless a test asked for it, either

- in a child process, with the environment variable ``RLA_FAULT=<point>[=kill|enospc]``
  (read once at import): ``kill`` (the default) SIGKILLs the process at that point,
  ``enospc`` raises ``OSError(ENOSPC)`` there; or
- in the test's own process, with :func:`injected` (a hook called with every point's name).

In production the cost of a point is one comparison of a module constant with ``""``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from typing import Callable, Iterator, Optional

ENV = "RLA_FAULT"
POINTS = (
    "replay.save:space-checked",
    "replay.publish:staging-written",
    "replay.publish:manifest-written",
    "replay.publish:before-rename",
    "replay.publish:renamed",
)
_SPEC = os.environ.get(ENV, "")
_hook: Optional[Callable[[str], None]] = None


def point(name: str) -> None:
    """Fault point ``name``: kill, fail or call the injected hook when a test asked to."""
    if _hook is not None:
        _hook(name)
    if _SPEC:
        where, _, action = _SPEC.partition("=")
        if where == name:
            fire(name, action or "kill")


def fire(name: str, action: str) -> None:
    """Do ``action`` (``kill`` or ``enospc``) at the point ``name``."""
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "enospc":
        raise OSError(errno.ENOSPC, f"No space left on device (injected at {name})")
    raise ValueError(f"{ENV}: unknown action {action!r} (kill or enospc)")


@contextlib.contextmanager
def injected(hook: Callable[[str], None]) -> Iterator[None]:
    """Call ``hook(point name)`` at every fault point inside the block (tests only)."""
    global _hook
    previous, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = previous
