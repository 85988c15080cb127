"""Append-only line files that survive SIGKILL: single-syscall appends and torn-tail repair."""
from __future__ import annotations

import os
from pathlib import Path

from RLA.fs import atomic_write_bytes as replace_atomically
from RLA.fs import remove_stale_temps


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``; one ``write(2)`` unless the kernel takes less."""
    while data:
        data = data[os.write(fd, data):]


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
