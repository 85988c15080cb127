"""Where a run operation may read and write: inside its data root, through no link.

The one exception is a data-type folder (``checkpoint/`` or ``arc/checkpoint/``) that is a
link, e.g. to a bigger disk: it is part of the database by the user's choice. Below it
(task, day and run folders) and above it (``arc``), and anywhere in ``.trash`` and
``.rla-journal``, a link is refused: it could lead outside the data root.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from RLA.errors import UnsafePathError
from RLA.layout import ARCHIVE
from RLA.safe_paths import check_relative


def _linkable(parts: tuple) -> int:
    """Position of the one component allowed to be a link (-1: none)."""
    if parts[0] == ARCHIVE:
        return 1
    if parts[0].startswith("."):
        return -1
    return 0


def check_path(root: os.PathLike, path: os.PathLike, what: str = "path") -> Path:
    """Return ``path`` when it lies inside ``root`` by name and no component but a data-type
    folder is a link (components that do not exist yet are fine).

    Raises:
        UnsafePathError: ``path`` leaves ``root`` or passes a link.
    """
    root_text = os.fspath(root)
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root_text))
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        raise UnsafePathError(
            f"The {what} {os.fspath(path)!r} is outside the data root",
            expected=f"a path inside {root_text!r}",
            found=rel,
            fix="check --data-root and the names given",
        )
    parts = check_relative(rel.replace(os.sep, "/"), what)
    linkable = _linkable(parts)
    current = root_text
    for position, part in enumerate(parts):  # strings, not Paths: this runs for every step, twice
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            break
        if stat.S_ISLNK(mode) and position != linkable:
            raise UnsafePathError(
                f"The path {current!r} is a symbolic link",
                expected="plain folders between the data root and its runs",
                found=f"a link to {os.readlink(current)!r}",
                fix="replace the link by a real folder (only a data-type folder such "
                "as checkpoint/ may be a link); RLA does not follow it",
            )
    return Path(path)
