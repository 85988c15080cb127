"""Append-only line files that survive SIGKILL: single-syscall appends and torn-tail repair."""
from __future__ import annotations

import glob
import os
import tempfile
from pathlib import Path

from RLA.fs import fsync_dir


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``; one ``write(2)`` unless the kernel takes less."""
    while data:
        data = data[os.write(fd, data):]


def replace_atomically(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` via a sibling temp file and ``os.replace``.

    The temp is named ``.<name>.<random>.tmp`` so that :func:`remove_stale_temps` can
    recognise (only) this writer's leftovers after a kill.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def remove_stale_temps(path: Path) -> None:
    """Delete temp files an atomic rewrite of ``path`` left behind when it was killed."""
    for stale in glob.glob(os.path.join(glob.escape(str(path.parent)), f".{glob.escape(path.name)}.*.tmp")):
        try:
            os.unlink(stale)
        except OSError:
            pass


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
