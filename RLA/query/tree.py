"""Find the runs on disk, re-listing only the directories whose modification time changed.

A directory's mtime changes whenever an entry is created, removed or renamed in it, so a
listing taken earlier is still exact while the mtime is the same. One guard makes that
safe with coarse timestamps (the same idea as git's "racy index" check): a listing is only
trusted when it was taken more than :data:`RACY_NS` after the directory's mtime; a
directory changed just before (or during) its listing is listed again next time. New,
deleted, archived and moved runs are therefore always seen, at the cost of one ``stat``
per directory down to the day directories instead of one walk of the whole tree.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from RLA.safe_paths import no_symlink_between
from RLA.layout import ARCHIVE_TESTER, DATA_TYPES, RunLayout, check_task, day_of, run_name_of, type_root

#: Data types whose presence makes a run: every one, so that a run left with only its
#: ``results/`` (a fragment) is still listed, and can be deleted or repaired.
DISCOVERY_TYPES = DATA_TYPES
#: A listing taken less than this after the directory's mtime is not trusted (coarse
#: timestamps: 1-2 s on some filesystems, a clock tick on ext4).
RACY_NS = 2_000_000_000


def run_key(run: RunLayout) -> str:
    """Catalog key of a run: its relative path, prefixed by ``arc:`` when archived."""
    return ("arc:" if run.archived else "") + run.relative


class _Listing:
    __slots__ = ("mtime_ns", "trusted", "dirs", "runs", "layouts")

    def __init__(self, mtime_ns: int, trusted: bool, dirs: List[str], runs: List[str]) -> None:
        self.mtime_ns = mtime_ns
        self.trusted = trusted
        self.dirs = dirs      # sub-directories to descend into (not for day directories)
        self.runs = runs      # run names (day directories only)
        self.layouts: Optional[List[RunLayout]] = None  # built on first use


class TreeCache:
    """Directory listings of one data root, reused while the directories are unchanged.

    Thread-safe; one instance per data root (see :class:`RLA.query.catalog.Catalog`).
    """

    def __init__(self, data_root: os.PathLike) -> None:
        self.data_root = os.fspath(data_root)
        self._listings: Dict[str, _Listing] = {}
        self._lock = threading.Lock()
        #: Bumped whenever a directory is listed afresh; discover() results are memoised on it.
        self.version = 0
        self._found: Dict[Tuple[Optional[str], Optional[bool]], Tuple[int, Dict[str, RunLayout]]] = {}

    def _list(self, path: str, is_day: bool, data_type: str) -> Optional[_Listing]:
        """The listing of ``path`` (cached while its mtime is unchanged); None if it is gone."""
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            if self._listings.pop(path, None) is not None:
                self.version += 1
            return None
        cached = self._listings.get(path)
        if cached is not None and cached.trusted and cached.mtime_ns == mtime:
            return cached
        listed_at = time.time_ns()
        dirs: List[str] = []
        runs: List[str] = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if is_day:
                        name = run_name_of(entry.name, data_type)
                        if name is not None and (entry.is_file() if data_type == ARCHIVE_TESTER
                                                 else entry.is_dir()):
                            runs.append(name)
                    elif not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        dirs.append(entry.name)  # as os.walk: no descent into links
        except OSError:
            if self._listings.pop(path, None) is not None:
                self.version += 1
            return None
        # A change in the same timestamp tick as the listing would leave the mtime as it is:
        # such a listing is used once and taken again next time.
        listing = _Listing(mtime, listed_at - mtime > RACY_NS, sorted(dirs), sorted(set(runs)))
        old = self._listings.get(path)
        if old is None or old.dirs != listing.dirs or old.runs != listing.runs:
            self.version += 1
        else:
            listing.layouts = old.layouts
        self._listings[path] = listing
        return listing

    def runs(self, data_type: str, task: Optional[str] = None, archived: bool = False) -> List[RunLayout]:
        """Every run under ``<data_root>[/arc]/<data_type>[/<task>]``, like
        :func:`RLA.layout.iter_run_dirs` (tasks may contain ``/``; hidden entries skipped).

        Raises:
            UnsafePathError: ``task`` is not a plain relative path (``..``, ``/abs``, ``a//b``).
        """
        if task is not None:
            check_task(task)
        root = Path(self.data_root)
        base = os.fspath(type_root(root, data_type, archived))
        start = os.path.join(base, task) if task else base
        if task:  # as the walk below: never into a linked task folder (it may lead outside)
            no_symlink_between(Path(base), Path(start))
        found: List[RunLayout] = []
        with self._lock:
            stack: List[Tuple[str, str]] = [(start, task or "")]
            while stack:
                path, rel = stack.pop()
                day = day_of(rel.split("/")) if rel else None
                listing = self._list(path, day is not None, data_type)
                if listing is None:
                    continue
                if day is not None:
                    if listing.layouts is None:
                        listing.layouts = [RunLayout(root, day[0], day[1], name, archived)
                                           for name in listing.runs]
                    found.extend(listing.layouts)
                    continue
                for name in reversed(listing.dirs):
                    stack.append((os.path.join(path, name), f"{rel}/{name}" if rel else name))
        return found

    def discover(self, task: Optional[str] = None, archived: Optional[bool] = False) -> Dict[str, RunLayout]:
        """Every run on disk (by :func:`run_key`, in key order), found under any data type
        (a run present under ``results/`` only is found too). The dict is shared: do not
        modify it.

        Args:
            archived: ``False`` active runs only, ``True`` archived only, ``None`` both.
        """
        flags = [False, True] if archived is None else [archived]
        per_type = [self.runs(data_type, task=task, archived=flag)
                    for flag in flags for data_type in DISCOVERY_TYPES]
        memo = self._found.get((task, archived))
        if memo is not None and memo[0] == self.version:
            return memo[1]
        found: Dict[str, RunLayout] = {}
        for runs in per_type:
            for run in runs:
                found.setdefault(run_key(run), run)
        found = {key: found[key] for key in sorted(found)}  # callers rely on the key order
        self._found[(task, archived)] = (self.version, found)
        return found


def discover(data_root: os.PathLike, task: Optional[str] = None,
             archived: Optional[bool] = False) -> Dict[str, RunLayout]:
    """Every run on disk (by key), listing the whole tree (no cache)."""
    return TreeCache(data_root).discover(task, archived)
