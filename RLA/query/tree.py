"""Find the runs on disk, listing again only the directories whose modification time changed.

A directory's mtime changes whenever an entry is created, removed or renamed in it, so a
listing taken earlier is still exact while the mtime is the same. The listings are kept in
the index (:mod:`RLA.query.index_file`, table ``dirs``), so a new process trusts what an
earlier one listed: a query ``stat``\\ s each folder down to the day folders and lists only
those whose mtime changed. One guard makes that safe with coarse timestamps (the same idea
as git's "racy index" check): a listing is only trusted when it was taken more than
:data:`RACY_NS` after the directory's mtime; a directory changed just before (or during)
its listing is listed again next time. New, deleted, archived and moved runs are therefore
always seen.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from RLA.layout import (
    ARCHIVE,
    ARCHIVE_TESTER,
    DATA_TYPES,
    RunLayout,
    check_task,
    day_of,
    run_name_of,
    type_root,
)
from RLA.safe_paths import no_symlink_between

#: Data types whose presence makes a run: every one, so that a run left with only its
#: ``results/`` (a fragment) is still listed, and can be deleted or repaired.
DISCOVERY_TYPES = DATA_TYPES
#: A listing taken less than this after the directory's mtime is not trusted (coarse
#: timestamps: 1-2 s on some filesystems, a clock tick on ext4).
RACY_NS = 2_000_000_000


def run_key(run: RunLayout) -> str:
    """Catalog key of a run: its relative path, prefixed by ``arc:`` when archived."""
    return ("arc:" if run.archived else "") + run.relative


def layout_of(data_root: Path, key: str) -> RunLayout:
    """The :class:`RunLayout` of a catalog key (inverse of :func:`run_key`)."""
    archived = key.startswith("arc:")
    parts = (key[4:] if archived else key).split("/")
    return RunLayout(data_root, "/".join(parts[:-4]), "/".join(parts[-4:-1]), parts[-1], archived)


@dataclass
class Listing:
    """One directory as listed: mtime, whether the listing may be trusted, its entries.

    ``names`` are sub-directories (above the day level) or run names (day directories);
    None when not loaded (a stored day listing is loaded only when needed).
    """

    mtime_ns: int
    trusted: bool
    names: Optional[List[str]]
    day: Optional[str] = None  # the runs' key prefix ``[arc:]task/YYYY/MM/DD`` (day dirs only)


@dataclass
class Walk:
    """The result of :func:`walk`: every directory seen, and what changed since the store."""

    listings: Dict[str, Listing] = field(default_factory=dict)
    #: Directories listed afresh whose listing differs from the stored one (or is new).
    changed: Set[str] = field(default_factory=set)
    #: Directories listed afresh (written back to the store), changed or not.
    relisted: Set[str] = field(default_factory=set)
    #: Day keys whose runs may differ from the store (a day directory changed, appeared or vanished).
    days: Set[str] = field(default_factory=set)
    #: Folders whose name is not UTF-8 (``[arc:]<path below the type root>``, escaped): reported, skipped.
    undecodable: Set[str] = field(default_factory=set)


def _decodable(name: str) -> bool:
    """Whether a folder name is valid UTF-8 (not one Python decoded with lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _scan(path: str, data_type: Optional[str]) -> Optional[Tuple[int, List[str], List[str]]]:
    """``(mtime, entries, undecodable entries)`` of a directory (runs of a day directory when
    ``data_type``). Entries whose name is not UTF-8 (copied from another locale) cannot be
    stored or queried: they are returned apart, to be reported."""
    try:
        mtime = os.stat(path).st_mtime_ns
        names: List[str] = []
        bad: List[str] = []
        with os.scandir(path) as entries:
            for entry in entries:
                if not _decodable(entry.name):
                    if not entry.name.startswith("."):
                        bad.append(
                            entry.name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                        )
                    continue
                if data_type is not None:
                    name = run_name_of(entry.name, data_type)
                    if name is not None and (
                        entry.is_file() if data_type == ARCHIVE_TESTER else entry.is_dir()
                    ):
                        names.append(name)
                elif not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                    names.append(entry.name)  # as os.walk: no descent into links
    except OSError:
        return None
    return mtime, sorted(set(names)), sorted(bad)


def _mtime(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def store_path(data_type: str, archived: bool, rel: str) -> str:
    """The ``dirs`` key of a directory: ``[arc/]<data_type>[/<rel>]`` (relative to the data root)."""
    base = f"{ARCHIVE}/{data_type}" if archived else data_type
    return f"{base}/{rel}" if rel else base


def walk(
    data_root: Path, stored: Dict[str, Listing], task: Optional[str], flags: List[bool], full: bool = False
) -> Walk:
    """Walk the data types' folders of ``task`` (all tasks when None) for the ``flags``
    (False active, True archived), reusing ``stored`` listings whose mtime is unchanged.

    Args:
        stored: listings from the index; day listings may lack ``names`` (not loaded).
        full: list every directory again (trust nothing stored).

    Raises:
        UnsafePathError: ``task`` is not a plain relative path (``..``, ``/abs``, ``a//b``).
    """
    if task is not None:
        check_task(task)
    result = Walk()
    for archived in flags:
        for data_type in DISCOVERY_TYPES:
            base = type_root(data_root, data_type, archived)
            if task:  # never into a linked task folder (it may lead outside)
                no_symlink_between(base, base / task)
            _walk_type(data_type, archived, os.fspath(base), task or "", stored, full, result)
    return result


def _walk_type(
    data_type: str,
    archived: bool,
    base: str,
    start: str,
    stored: Dict[str, Listing],
    full: bool,
    result: Walk,
) -> None:
    stack: List[str] = [start]
    while stack:
        rel = stack.pop()
        path = os.path.join(base, rel) if rel else base
        key = store_path(data_type, archived, rel)
        day = day_of(rel.split("/")) if rel else None
        day_key = (("arc:" if archived else "") + f"{day[0]}/{day[1]}") if day else None
        old = stored.get(key)
        mtime = _mtime(path)
        if mtime is None:
            if old is not None and day_key:
                result.days.add(day_key)
            continue
        if (
            old is not None
            and old.trusted
            and old.mtime_ns == mtime
            and not full
            and (old.names is not None or day_key)
        ):
            listing = old
        else:
            listed_at = time.time_ns()
            scanned = _scan(path, data_type if day_key else None)
            if scanned is None:
                if old is not None and day_key:
                    result.days.add(day_key)
                continue
            # A change in the same timestamp tick as the listing would leave the mtime as it
            # is: such a listing is used once and taken again next time.
            # A folder holding undecodable names is never trusted: listed (and reported) every time.
            listing = Listing(
                scanned[0], listed_at - scanned[0] > RACY_NS and not scanned[2], scanned[1], day_key
            )
            prefix = ("arc:" if archived else "") + (f"{rel}/" if rel else "")
            result.undecodable.update(prefix + name for name in scanned[2])
            result.relisted.add(key)
            if old is None or old.names is None or old.names != listing.names or not old.trusted:
                result.changed.add(key)
                if day_key:
                    result.days.add(day_key)
        listing.day = day_key
        result.listings[key] = listing
        if not day_key:
            stack.extend(f"{rel}/{name}" if rel else name for name in reversed(listing.names or []))


def gone_dirs(
    stored: Dict[str, Listing], seen: Dict[str, Listing], task: Optional[str], flags: List[bool]
) -> List[str]:
    """Stored directories in scope that the walk no longer reached (removed, or below one)."""
    prefixes = [store_path(t, flag, task or "") for flag in flags for t in DISCOVERY_TYPES]
    return [
        path
        for path in stored
        if path not in seen and any(path == p or path.startswith(p + "/") for p in prefixes)
    ]


def discover(
    data_root: os.PathLike, task: Optional[str] = None, archived: Optional[bool] = False
) -> Dict[str, RunLayout]:
    """Every run on disk (by :func:`run_key`, in key order), listing the whole tree (no index).

    Args:
        archived: ``False`` active runs only, ``True`` archived only, ``None`` both.
    """
    root = Path(data_root)
    flags = [False, True] if archived is None else [archived]
    found: Dict[str, RunLayout] = {}
    for listing in walk(root, {}, task, flags, full=True).listings.values():
        if listing.day is None:
            continue
        for name in listing.names or []:
            key = f"{listing.day}/{name}"
            if key not in found:
                found[key] = layout_of(root, key)
    return {key: found[key] for key in sorted(found)}
