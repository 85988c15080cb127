"""The run's ``warn.txt`` and ``backup.txt``: where a Logger appends its WARN/ERROR and BACKUP lines."""

from __future__ import annotations

import os
from typing import Dict

from RLA.logger.formats._append import UndoableAppends

WARN_TXT = "warn.txt"
BACKUP_TXT = "backup.txt"


class TextFiles:
    """Both files of a log directory, opened for appending (created if missing).

    Each line is appended whole or not at all (a full disk raises
    :class:`RLA.errors.DiskFullError` and leaves no partial line).

    Args:
        dir: the log directory (it exists).
    """

    def __init__(self, dir: str) -> None:
        self._fds: Dict[str, int] = {}
        self._outs: Dict[str, UndoableAppends] = {}
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            for name in (WARN_TXT, BACKUP_TXT):
                path = os.path.join(dir, name)
                self._fds[name] = os.open(path, flags, 0o644)
                self._outs[name] = UndoableAppends(self._fds[name], path)
        except BaseException:
            self.close()
            raise

    def append(self, name: str, line: str) -> None:
        """Append ``line`` and a newline to the file ``name`` (:data:`WARN_TXT` or :data:`BACKUP_TXT`)."""
        out = self._outs.get(name)
        if out is not None:
            out.append((line + "\n").encode("utf-8", "backslashreplace"))

    def close(self) -> None:
        """Close both files. Idempotent."""
        fds, self._fds, self._outs = self._fds, {}, {}
        for fd in fds.values():
            os.close(fd)
