"""Append-only line files that survive SIGKILL and a full disk: appends that undo, torn-tail repair."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Union

from RLA.fs import as_disk_full, remove_stale_temps
from RLA.fs import atomic_write_bytes as replace_atomically
from RLA.logger.formats.base import StagedRow


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``; one ``write(2)`` unless the kernel takes less."""
    while data:
        data = data[os.write(fd, data) :]


class UndoableAppends:
    """An ``O_APPEND`` descriptor whose appends can be cut off again.

    The bytes appended are counted in memory, so an append costs its ``write(2)`` alone;
    only an undo asks the kernel where the file ends (the descriptor's offset is the end of
    its last write). This object must be the only writer of the descriptor.

    Args:
        fd: a descriptor opened with ``O_APPEND``.
        path: the file's path (named by a :class:`RLA.errors.DiskFullError`).
    """

    def __init__(self, fd: int, path: Union[str, "os.PathLike[str]"]) -> None:
        self.fd = fd
        self.path = path
        self.appended = 0

    def append(self, data: bytes) -> "StagedAppend":
        """Append ``data`` whole, or leave the file as it was and raise.

        Raises:
            DiskFullError: ENOSPC/EDQUOT (a full disk can stop ``write(2)`` part way: the
                partial line is cut off before the error leaves).
        """
        view, written = memoryview(data), 0
        try:
            while written < len(view):
                written += os.write(self.fd, view[written:])
        except BaseException as exc:
            error = as_disk_full(exc, self.path)  # measured before the cut frees the partial line
            if written:
                with contextlib.suppress(OSError):
                    self._cut(written)
            if error is exc:
                raise
            raise error from exc
        self.appended += written
        return StagedAppend(self, self.appended - written)

    def undo_since(self, mark: int) -> None:
        """Cut off every byte appended after the count was ``mark``."""
        count = self.appended - mark
        if count > 0:
            self._cut(count)
            self.appended = mark

    def _cut(self, count: int) -> None:
        end = os.lseek(self.fd, 0, os.SEEK_CUR)
        os.ftruncate(self.fd, end - count)
        os.lseek(self.fd, end - count, os.SEEK_SET)


class StagedAppend(StagedRow):
    """A row appended by :class:`UndoableAppends`; :meth:`rollback` cuts it (and what followed) off."""

    def __init__(self, out: UndoableAppends, mark: int) -> None:
        self.out = out
        self.mark = mark

    def rollback(self) -> None:
        self.out.undo_since(self.mark)


def repair_torn_tail(path: Path) -> bytes:
    """Drop a partial last line (a write cut by a kill) and return the clean content.

    The live file is replaced atomically (temp + ``os.replace``), never truncated in place,
    so a kill during the repair leaves either the old or the repaired file.

    Returns:
        The file's bytes after repair (``b""`` if it does not exist).
    """
    remove_stale_temps(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return b""
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        data = data[:cut]
        replace_atomically(path, data)
    return data
