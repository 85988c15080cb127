"""Append-only line files that survive SIGKILL and a full disk: appends that undo, torn-tail repair."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Union

from RLA.fs import atomic_write_bytes as replace_atomically
from RLA.fs import disk_full_as_error, remove_stale_temps
from RLA.logger.formats.base import StagedRow


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``; one ``write(2)`` unless the kernel takes less."""
    while data:
        data = data[os.write(fd, data):]


class StagedAppend(StagedRow):
    """Bytes appended to a file that :meth:`rollback` cuts off again (``ftruncate`` to the old size)."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def rollback(self) -> None:
        os.ftruncate(self.fd, self.size)


def append_undoable(fd: int, data: bytes, path: Union[str, "os.PathLike[str]"]) -> StagedAppend:
    """Append ``data`` to the ``O_APPEND`` descriptor ``fd`` so that it can be undone.

    A failed append (a full disk stops ``write(2)`` part way) is cut off before the error
    leaves: the file ends where it ended before, never in a partial line.

    Raises:
        DiskFullError: ENOSPC/EDQUOT, naming ``path`` and the free space.
    """
    staged = StagedAppend(fd, os.fstat(fd).st_size)
    try:
        with disk_full_as_error(path):
            write_all(fd, data)
    except BaseException:
        with contextlib.suppress(OSError):
            staged.rollback()
        raise
    return staged


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
