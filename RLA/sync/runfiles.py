"""A run's files as sync keys: local walk, remote walk and key → path mapping.

Neither walk follows a symbolic link: see :func:`local_files` and :func:`remote_files`.

A key is ``<data_type>/<path inside the run's directory>``; the ``archive_tester`` state,
a single file, is the key ``archive_tester``. The same key names a file on both sides, so
a pushed run has exactly the layout of a local one.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path
from typing import IO, Callable, Dict, Iterable, Optional, Tuple

from RLA.errors import TransportError, UnsafePathError
from RLA.layout import ARCHIVE_TESTER, RunLayout
from RLA.safe_paths import NOFOLLOW, NONBLOCK, inside, no_symlink_between
from RLA.sync.base import PERMISSION_BITS, Transport
from RLA.sync.planner import LocalFile, RemoteFile

#: Suffix of temporary remote (and local, on pull) files; hidden by a leading dot.
PART_SUFFIX = ".rla-part"


def is_transient(name: str) -> bool:
    """Temporary files of atomic writes and interrupted transfers are never synced."""
    return name.endswith(PART_SUFFIX) or (name.startswith(".") and name.endswith(".tmp"))


def part_name(path: str) -> str:
    """The temporary name a file is transferred under before its rename."""
    head, tail = posixpath.split(path)
    return posixpath.join(head, f".{tail}{PART_SUFFIX}")


def key_path(layout: RunLayout, key: str) -> str:
    """The path of ``key`` under ``layout`` (local or remote: ``layout.data_root`` decides)."""
    data_type, _, inner = key.partition("/")
    base = layout.path(data_type).as_posix()
    return posixpath.join(base, inner) if inner else base


Refuse = Callable[[str, str], None]
#: Why a remote FIFO, socket or device is left out (opening a FIFO blocks until someone writes).
_NOT_A_FILE = "it is not a regular file on the server (a pipe, socket or device)"


def _ignore(_key: str, _reason: str) -> None:
    """The default ``refuse``: leave the file out silently."""


def _linked_file(path: str, run_dir: str) -> Tuple[Optional[Tuple[str, os.stat_result]], str]:
    """The regular file a link inside the run folder points to, or ``(None, why not)``."""
    try:
        target = os.path.realpath(path, strict=True)
    except OSError:
        return None, "it is a symbolic link that dangles or loops"
    try:
        inside(Path(run_dir), Path(target))
    except UnsafePathError:
        return None, f"it is a symbolic link to {os.readlink(path)!r}, outside the run folder"
    try:
        st = os.stat(target, follow_symlinks=False)
    except OSError:
        return None, "it is a symbolic link whose target vanished"
    if not stat.S_ISREG(st.st_mode):
        return None, "it is a symbolic link to a folder or a special file"
    return (target, st), ""


def _scan(directory: str, prefix: str, run_dir: str, out: Dict[str, LocalFile], refuse: Refuse) -> None:
    """Files below ``directory`` without following links (``os.scandir`` + ``lstat``)."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if is_transient(entry.name):
            continue
        key = f"{prefix}{entry.name}"
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:  # removed while we looked (checkpoint rotation)
            continue
        if stat.S_ISDIR(st.st_mode):
            _scan(entry.path, key + "/", run_dir, out, refuse)
        elif stat.S_ISREG(st.st_mode):
            out[key] = LocalFile(
                entry.path,
                st.st_size,
                st.st_mtime_ns,
                stat.S_IMODE(st.st_mode) & PERMISSION_BITS,
                (st.st_dev, st.st_ino),
            )
        elif stat.S_ISLNK(st.st_mode):
            found, why = _linked_file(entry.path, run_dir)
            if found is None:
                refuse(key, why)
                continue
            target, tst = found
            out[key] = LocalFile(
                target,
                tst.st_size,
                tst.st_mtime_ns,
                stat.S_IMODE(tst.st_mode) & PERMISSION_BITS,
                (tst.st_dev, tst.st_ino),
            )
        else:
            refuse(key, "it is not a regular file (a pipe, socket or device)")


def local_files(
    layout: RunLayout, data_types: Iterable[str], refuse: Refuse = _ignore
) -> Dict[str, LocalFile]:
    """Every syncable file of the run on this machine, found without following links.

    A link to a regular file inside the run's folder of the same data type stands for that
    file (its content is sent); any other link (outside the run folder, to a folder,
    dangling, a loop) and any special file is left out and reported to ``refuse(key, why)``,
    and so is a whole data type whose folder is reached through a link.
    """
    out: Dict[str, LocalFile] = {}
    for data_type in data_types:
        path = layout.path(data_type)
        try:
            no_symlink_between(layout.data_root, path)
        except UnsafePathError as exc:
            if os.path.lexists(path):
                refuse(data_type, exc.problem)
            continue
        if data_type != ARCHIVE_TESTER:
            _scan(os.fspath(path), f"{data_type}/", os.path.realpath(path), out, refuse)
            continue
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            out[ARCHIVE_TESTER] = LocalFile(
                os.fspath(path),
                st.st_size,
                st.st_mtime_ns,
                stat.S_IMODE(st.st_mode) & PERMISSION_BITS,
                (st.st_dev, st.st_ino),
            )
        else:
            refuse(ARCHIVE_TESTER, "it is not a regular file")
    return out


def open_local(lpath: str, identity: Optional[Tuple[int, int]] = None) -> IO[bytes]:
    """Open a listed local file for reading; a link, a non-file or another file put there since is refused.

    ``identity`` is the ``(st_dev, st_ino)`` the walk saw: ``O_NOFOLLOW`` guards only the
    last component, so a run folder swapped for a link after the walk would otherwise make
    push send whatever file of that name the link leads to.
    """
    fd = os.open(lpath, os.O_RDONLY | NOFOLLOW | NONBLOCK)
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (
        identity is not None and (opened.st_dev, opened.st_ino) != identity
    ):
        os.close(fd)
        raise TransportError(
            f"{lpath} is not the file listed a moment ago",
            expected="the regular file the walk found",
            found="another file, a folder, a FIFO or a file reached through a link",
            fix="sync again; check who changes the run folder while it is pushed",
        )
    return os.fdopen(fd, "rb")


def _prefixed(refuse: Refuse, data_type: str) -> Refuse:
    """``refuse`` for paths relative to one data type's folder (reported as keys)."""
    return lambda rel, why: refuse(f"{data_type}/{rel}", why)


def remote_files(
    transport: Transport, layout: RunLayout, data_types: Iterable[str], refuse: Refuse = _ignore
) -> Dict[str, RemoteFile]:
    """Every file of the run on the remote side (``layout`` rooted at the remote root).

    Names that are not plain, links, FIFOs, sockets, devices and anything too deep are left
    out and reported to ``refuse(key, why)``: nothing a server lists can name a path outside
    the run, or make a read block.
    """
    out: Dict[str, RemoteFile] = {}
    for data_type in data_types:
        if data_type == ARCHIVE_TESTER:
            found = transport.stat(key_path(layout, ARCHIVE_TESTER))
            if found is not None and (found.is_link or found.is_special):
                refuse(
                    ARCHIVE_TESTER, _NOT_A_FILE if found.is_special else "it is a symbolic link on the server"
                )
            elif found is not None:
                out[ARCHIVE_TESTER] = RemoteFile(found.size, found.mtime, found.mode)
            continue
        for rel, entry in transport.walk(key_path(layout, data_type), refuse=_prefixed(refuse, data_type)):
            key = f"{data_type}/{rel}"
            if is_transient(posixpath.basename(rel)):
                continue
            if entry.is_link:
                refuse(key, "it is a symbolic link on the server")
            elif entry.is_special:
                refuse(key, _NOT_A_FILE)
            else:
                out[key] = RemoteFile(entry.size, entry.mtime, entry.mode)
    return out


def split_key(key: str) -> Tuple[str, str]:
    """``(data_type, inner path)`` of a key."""
    data_type, _, inner = key.partition("/")
    return data_type, inner
