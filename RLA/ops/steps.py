"""The moves of one data type, each safe to repeat after a crash at any point.

Every function looks at what is on disk and does what is left, so that running it again
after a kill finishes the job:

* move: one ``rename`` (atomic). Across filesystems (a data-type folder linked to another
  disk) the source is first renamed to a hidden *to-be-deleted* sibling, copied to a hidden
  *partial* name next to the destination, renamed into place, then the hidden source is
  removed.
* copy: copied to the partial name, then renamed into place: a destination that exists
  is always complete.
* purge: renamed to the to-be-deleted name (the run leaves every listing at once), then
  removed.

Hidden names are ``.rla-<op-id>.part.<hash>`` and ``.rla-<op-id>.gone.<hash>``; discovery
skips hidden entries and ``rla fsck`` finds the ones a lost journal left.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
from pathlib import Path

from RLA.fs import disk_full_as_error, fsync_dir
from RLA.ops.faults import fault_point

PART, GONE = "part", "gone"
STAGED_RE = re.compile(r"^\.rla-(?P<op>\d{8}-\d{6}-\d+-[0-9a-f]+)\.(?P<kind>part|gone)\.[0-9a-f]{12}$")


class Blocked(OSError):
    """A destination holds something this operation did not put there."""


def staged(path: Path, op_id: str, kind: str) -> Path:
    """The hidden sibling of ``path`` used by operation ``op_id`` (kind ``part`` or ``gone``)."""
    digest = hashlib.sha1(path.name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return path.parent / f".rla-{op_id}.{kind}.{digest}"


def exists(path: Path) -> bool:
    return os.path.lexists(path)


def remove(path: Path) -> None:
    """Delete a file, a link (never what it points to) or a whole folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif exists(path):
        path.unlink()


def _rename(src: Path, dst: Path) -> None:
    os.rename(src, dst)
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)


def _copy_file(src: str, dst: str) -> None:
    """Copy one file (a link as a link) and fsync it: a copy is renamed into place and, in a
    move across filesystems, its source removed next; a power cut must not leave it empty.

    Raises:
        DiskFullError: no space for it (names ``dst`` and the free space).
    """
    with disk_full_as_error(dst):
        shutil.copy2(src, dst, follow_symlinks=False)
        if not os.path.islink(dst):
            fd = os.open(dst, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fault_point("file-copied")


def _copy_tree(src: str, dst: str) -> None:
    """Copy a folder (links as links, none followed), stopping at the first error (unlike
    ``shutil.copytree``, which tries every other file and folds the errors into one list);
    each folder is fsynced once its entries are in."""
    with disk_full_as_error(dst):
        os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            target = os.path.join(dst, entry.name)
            if entry.is_dir(follow_symlinks=False):
                _copy_tree(entry.path, target)
            else:
                _copy_file(entry.path, target)
    shutil.copystat(src, dst, follow_symlinks=False)
    fsync_dir(dst)


def _copy_into(src: Path, dst: Path, op_id: str) -> None:
    """Copy ``src`` to ``dst`` through the partial name (a kill leaves no half ``dst``)."""
    part = staged(dst, op_id, PART)
    if exists(part):
        remove(part)
    with disk_full_as_error(dst.parent):
        dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir() and not src.is_symlink():
        _copy_tree(os.fspath(src), os.fspath(part))
    else:
        _copy_file(os.fspath(src), os.fspath(part))
    fault_point("staged")
    _rename(part, dst)


def move(src: Path, dst: Path, op_id: str) -> bool:
    """Move ``src`` to ``dst``; returns False when neither is there (the data vanished).

    Raises:
        Blocked: ``src`` and ``dst`` both exist (``dst`` is not this operation's).
    """
    gone = staged(src, op_id, GONE)
    if exists(dst):
        if exists(src):
            raise Blocked(errno.EEXIST, "the destination already exists", os.fspath(dst))
        if exists(gone):  # a move across filesystems was removing its source
            remove(gone)
        return True
    if exists(src):
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            _rename(src, dst)
            return True
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        _rename(src, gone)
    if not exists(gone):
        return False
    _copy_into(gone, dst, op_id)
    remove(gone)
    return True


def unmove(src: Path, dst: Path, op_id: str) -> None:
    """Undo :func:`move` from whatever point it reached: the data ends at ``src``."""
    gone = staged(src, op_id, GONE)
    part = staged(dst, op_id, PART)
    if exists(part):
        remove(part)
    if exists(gone) and not exists(src):
        if exists(dst):  # the copy across filesystems is complete, its source maybe half removed
            remove(gone)
        else:
            _rename(gone, src)
            return
    if exists(dst) and not exists(src):
        move(dst, src, op_id)


def copy(src: Path, dst: Path, op_id: str) -> bool:
    """Copy ``src`` to ``dst`` unless ``dst`` exists; False when ``src`` vanished."""
    if exists(dst):
        return True
    if not exists(src):
        part = staged(dst, op_id, PART)
        if exists(part):
            remove(part)
        return False
    _copy_into(src, dst, op_id)
    return True


def uncopy(dst: Path, op_id: str) -> None:
    """Undo :func:`copy` (only for a copy this operation made: ``dst`` was checked free)."""
    part = staged(dst, op_id, PART)
    if exists(part):
        remove(part)
    if exists(dst):
        remove(dst)


def purge(src: Path, op_id: str) -> bool:
    """Delete ``src`` for good: rename to the to-be-deleted name, then remove it."""
    gone = staged(src, op_id, GONE)
    if exists(src):
        if exists(gone):
            remove(gone)
        _rename(src, gone)
        fault_point("staged")
    if not exists(gone):
        return False
    remove(gone)
    fsync_dir(gone.parent)
    return True
