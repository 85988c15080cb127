"""The lock of run operations on a data root: one mutating operation at a time.

``<data_root>/.rla-journal/lock`` is locked with ``fcntl.flock``; the kernel releases it
when its holder dies (even by SIGKILL), so a crash never leaves a stale lock. The holder's
pid is written into the file for the "busy" message.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Iterable, List, Optional, Union

from RLA.errors import RLAError
from RLA.layout import JOURNAL_DIR
from RLA.safe_paths import no_symlink_between

LOCK_FILE = "lock"
#: Seconds an operation waits for another one to finish.
DEFAULT_TIMEOUT = 120.0


class OperationBusyError(RLAError):
    """Another operation holds the data root's lock for too long."""


def journal_dir(data_root: Union[str, os.PathLike], create: bool = False) -> Path:
    """``<data_root>/.rla-journal`` (refused when it is a symlink: it could lead outside)."""
    path = Path(data_root) / JOURNAL_DIR
    no_symlink_between(data_root, path)
    if create:
        path.mkdir(exist_ok=True)
    return path


class OpsLock:
    """Exclusive lock of one data root (a context manager; ``close()`` is idempotent)."""

    def __init__(self, data_root: Union[str, os.PathLike], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.data_root = Path(data_root)
        self.timeout = timeout
        self._fd: Optional[int] = None

    def acquire(self) -> "OpsLock":
        """Wait (polling) until the lock is ours.

        Raises:
            OperationBusyError: still held by another process after ``timeout`` seconds.
        """
        path = journal_dir(self.data_root, create=True) / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                    os.close(fd)
                    raise OperationBusyError(
                        f"Another operation is changing {self.data_root}",
                        expected="no other rla delete/archive/migrate/fsck running",
                        found=f"the lock {path} held by pid {holder} for {self.timeout:.0f} s",
                        fix="wait for it to finish, then try again",
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd
        return self

    def close(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> "OpsLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.close()


class RootsLock:
    """The locks of several data roots, taken in one fixed order (no deadlock between two
    migrations in opposite directions)."""

    def __init__(self, roots: Iterable[Union[str, os.PathLike]], timeout: float = DEFAULT_TIMEOUT) -> None:
        unique = {os.path.realpath(os.fspath(root)): Path(root) for root in roots}
        self.roots = [unique[key] for key in sorted(unique)]
        self.keys = set(unique)
        self.timeout = timeout
        self._held: List[OpsLock] = []

    def holds(self, root: Union[str, os.PathLike]) -> bool:
        return os.path.realpath(os.fspath(root)) in self.keys

    def __enter__(self) -> "RootsLock":
        try:
            for root in self.roots:
                self._held.append(OpsLock(root, self.timeout).acquire())
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        while self._held:
            self._held.pop().close()

    def __exit__(self, *exc: object) -> None:
        self.close()
