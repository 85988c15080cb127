"""Staging directories of saves in progress: claimed while written, swept once abandoned.

A save creates ``<store>/.staging-<id>-<token>`` and holds a shared ``flock`` on it until the
directory is published (renamed) or removed. A process killed mid-save drops its lock with
its file descriptors, so the next save's sweep can tell a leftover (no lock held: removed at
once) from a save still running in another process or rank (lock held: left alone). A
directory whose lock cannot be checked (a file system without ``flock``) is removed only
after ``TTL`` seconds.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Dict

from RLA.errors import ReplayBufferError

#: Staging directories whose lock cannot be checked are leftovers after this many seconds.
TTL = 3600.0
_CLAIMS: Dict[str, int] = {}  # staging path -> the fd holding its lock (this process)


def claim(path: Path) -> None:
    """Hold a shared lock on the staging directory ``path`` until :func:`release`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        with contextlib.suppress(OSError):  # no flock here: the sweep falls back to the TTL
            fcntl.flock(fd, fcntl.LOCK_SH)
        if os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise FileNotFoundError(path)
    except OSError:
        os.close(fd)
        raise ReplayBufferError(
            f"The staging folder {path} was removed by a concurrent cleanup",
            expected="the folder this save created",
            found="it is gone",
            fix="save again",
        ) from None
    release(path)
    _CLAIMS[str(path)] = fd


def release(path: Path) -> None:
    """Drop this process's lock on ``path`` (idempotent)."""
    fd = _CLAIMS.pop(str(path), None)
    if fd is not None:
        os.close(fd)


def abandoned(path: Path) -> bool:
    """True when no process holds ``path``'s lock (or, without flock, it is older than TTL)."""
    if str(path) in _CLAIMS:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        return time.time() - os.fstat(fd).st_mtime > TTL
    finally:
        os.close(fd)  # also drops the probe's lock


def sweep(store: Path, prefix: str) -> int:
    """Remove the abandoned staging directories (``prefix*``) of ``store``; returns the count.

    Each is first renamed away (a hidden ``.deleting-`` name), so a save that claims the same
    path afterwards finds its own new folder, never a half-deleted one.
    """
    removed = 0
    for entry in store.iterdir():
        if entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink() and abandoned(entry):
            trash = store / f".deleting-{entry.name}-{uuid.uuid4().hex[:6]}"
            with contextlib.suppress(OSError):
                os.rename(entry, trash)
                shutil.rmtree(trash, ignore_errors=True)
                removed += 1
    return removed
