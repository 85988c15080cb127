"""Write a run's small files from its catalog entry into a store's local cache (every path checked).

The reader of a store's catalog (:mod:`RLA.sync.catalog_read`) stores most runs' records
in the local index directly (:mod:`RLA.sync.catalog_seed`), with only their folders in
the cache. A run whose entry the query must read from files (one the pusher could not
summarize, or whose files the query reports as damaged) gets them written here: texts
from the entry, the rest downloaded from the store. Folders are created below the cache
only, never through a link (:class:`Folders`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any, Optional

from RLA.errors import UnsafePathError
from RLA.fs import TEMP_SUFFIX, atomic_file, temp_prefix
from RLA.layout import ARCHIVE_TESTER, CODE, LOG, RunLayout
from RLA.safe_paths import no_symlink_between
from RLA.sync.base import RemoteFileError
from RLA.sync.remote_names import local_destination
from RLA.sync.runfiles import key_path
from RLA.sync.store_catalog import PROGRESS_KEY, SMALL_KEYS, Entry


def layout_of(root: Path, entry: Entry) -> RunLayout:
    """The cached run of ``entry`` (its place was checked when the entry was parsed)."""
    parts = entry.relative.split("/")
    return RunLayout(root, "/".join(parts[:-4]), "/".join(parts[-4:-1]), parts[-1], entry.archived)


class Folders:
    """Plain folders below the cache, created as needed; each is checked once (no link, no file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.top = os.fspath(root)
        self.checked = {self.top}

    def ensure(self, path: str) -> str:
        if path in self.checked:
            return path
        if not path.startswith(self.top + os.sep):
            raise UnsafePathError(
                f"{path!r} is not inside {self.root}",
                expected="a folder of the cache",
                found=path,
                fix="report this: run names are checked before",
            )
        self.ensure(os.path.dirname(path))
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            try:
                os.mkdir(path)
                mode = stat.S_IFDIR
            except FileExistsError:  # another refresh of this cache made it meanwhile: check it
                mode = os.lstat(path).st_mode
        if not stat.S_ISDIR(mode):
            no_symlink_between(self.root, path)  # raises for a link
            raise UnsafePathError(
                f"{path!r} is not a folder",
                expected="a folder",
                found="a file",
                fix="remove it from the cache",
            )
        self.checked.add(path)
        return path


def _write(path: str, data: bytes, mtime: Optional[float]) -> bool:
    """Replace ``path`` with ``data`` (temp + rename, never through a link; skipped when it holds
    them already); set its time."""
    try:
        st: Optional[os.stat_result] = os.lstat(path)
    except FileNotFoundError:
        st = None
    same = False
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
        with open(path, "rb") as handle:
            same = handle.read() == data
    if not same:
        tmp = os.path.join(os.path.dirname(path), f"{temp_prefix(path)}{os.getpid()}{TEMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    if mtime is not None:
        os.utime(path, (mtime, mtime), follow_symlinks=False)
    return not same


def _fetch(transport: Any, remote_root: str, local: RunLayout, key: str, limit: int) -> None:
    """Download one file of a run the pusher could not summarize (damaged, or too big to carry)."""
    remote = RunLayout(Path(remote_root), local.task, local.date, local.name)
    path = local_destination(local, key)
    try:
        with atomic_file(path, durable=False) as handle:
            transport.read(key_path(remote, key), handle, 0, limit)
    except RemoteFileError:
        if path.is_file() and not path.is_symlink():
            path.unlink()  # gone from the store: gone from the cache


def materialize(transport: Any, remote_root: str, folders: "Folders", entry: Entry, limit: int) -> RunLayout:
    """Write the cached files of ``entry``'s run (every path checked); returns its local layout.

    Cached small files the entry no longer has are removed, and so is a cached
    ``progress.csv`` of a run that has none; a cached copy of curves the entry summarizes
    stays (the index takes the entry's summary; a command that reads the curves
    refreshes them).
    """
    local = layout_of(folders.root, entry)
    folder = {t: os.fspath(local.path(t)) for t in (LOG, CODE, ARCHIVE_TESTER)}
    for key in (*SMALL_KEYS, PROGRESS_KEY):
        data_type, _, inner = key.partition("/")
        path = os.path.join(folder[data_type], inner) if inner else folder[data_type]
        if key in entry.texts:
            text, mtime = entry.texts[key]
            folders.ensure(os.path.dirname(path))
            _write(path, text.encode("utf-8"), mtime)
        elif key not in entry.fetch and (key != PROGRESS_KEY or entry.progress is None):
            # gone from the run; a cached progress.csv of a run that has none is stale
            if os.path.lexists(path):
                folders.ensure(os.path.dirname(path))
                if not os.path.isdir(path):
                    os.unlink(path)
    for key in entry.fetch:
        _fetch(transport, remote_root, local, key, limit)
    return local
