"""What a process remembers of each data root between queries: directory listings and run records.

The directory tree stays the source of truth; this only decides which files must be
looked at again. Every query re-checks the tree's directories (so a run created, deleted,
archived or moved is always seen, see :mod:`RLA.query.tree`) and ``stat``\\ s the files of
every run that may still change. A run is *settled* when its ``run.json`` says it ended
(or its process is gone) and none of its files changed for :data:`SETTLE_S` seconds; a
settled run's files are ``stat``\\ ed again at least every ``recheck_s`` seconds (default
:data:`RECHECK_S`), or at once with ``verify=True``. So a hand edit of an ended run's
files shows up within ``recheck_s`` in a long-lived process, and at once in a new one.

One :class:`WarmCaches` instance per process (:data:`WARM`); ``WARM.reset()`` forgets all.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from RLA.layout import RunLayout
from RLA.manager.run_info import CRASHED, FINISHED, KILLED
from RLA.query.records import RunRecord
from RLA.query.tree import TreeCache

#: Seconds without a change to any indexed file before an ended run counts as settled.
SETTLE_S = 60.0
#: A settled run's files are stat'ed again at least this often (seconds).
RECHECK_S = 30.0
#: Data roots remembered per process (least recently used dropped first).
MAX_ROOTS = 16
_ENDED = (FINISHED, CRASHED, KILLED)


@dataclass
class Entry:
    """One run as last seen: its layout, file signature, record and when it was checked."""

    layout: RunLayout
    sig: str
    record: RunRecord
    checked_at: float  # time.monotonic() of the last stat
    settled: bool


def is_settled(record: RunRecord, newest_mtime_ns: int, now_ns: int) -> bool:
    """Whether a run can no longer change by itself (see the module docstring)."""
    if record.problems or newest_mtime_ns == 0 or now_ns - newest_mtime_ns < SETTLE_S * 1e9:
        return False  # broken, none of its files written yet (a run being created), or recent
    if not record.info:  # legacy or synced-without-run.json runs: quiet files are enough
        return True
    if record.info.get("status") in _ENDED:
        return True
    from RLA.manager.run_info import effective_status
    return effective_status(record.info) in _ENDED


@dataclass
class View:
    """The last answer for one (task, archived) scope and what it depends on."""

    tree_version: int
    generation: int
    pairs: List[Tuple[RunLayout, RunRecord]]
    live: List[Entry]            # entries whose files are stat'ed on every query
    oldest_check: float          # the earliest checked_at among the settled entries


class RootState:
    """The remembered state of one data root (use under :attr:`lock`)."""

    def __init__(self, data_root: str) -> None:
        self.lock = threading.RLock()
        self.tree = TreeCache(data_root)
        self.entries: Dict[str, Entry] = {}
        #: ``stat`` of each SQLite file as this process last left it: a change (another
        #: process wrote it, it was deleted or corrupted) means "open and check it".
        self.db_stats: Dict[str, Optional[Tuple[int, int, int]]] = {}
        #: The last answer per (task, archived) scope (see Catalog._unchanged); its tree
        #: version also tells whether the scope can have lost runs since.
        self.views: Dict[Tuple[Optional[str], Optional[bool]], View] = {}
        #: Bumped whenever a record is added, changed or dropped.
        self.generation = 0
        self.derived: Dict[object, object] = {}

    def bump(self) -> None:
        self.generation += 1
        self.derived.clear()

    def cached(self, key: object, build: Callable[[], Any]) -> Any:
        """``build()`` memoised until the records change (per-generation derived data)."""
        with self.lock:
            if key not in self.derived:
                self.derived[key] = build()
            return self.derived[key]


class WarmCaches:
    """Per-process states of the data roots queried so far."""

    def __init__(self) -> None:
        self._roots: "OrderedDict[str, RootState]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, data_root: os.PathLike) -> RootState:
        """The state of ``data_root`` (created empty on first use)."""
        key = os.path.abspath(os.fspath(data_root))
        with self._lock:
            state = self._roots.get(key)
            if state is None:
                state = self._roots[key] = RootState(os.fspath(data_root))
                while len(self._roots) > MAX_ROOTS:
                    self._roots.popitem(last=False)
            else:
                self._roots.move_to_end(key)
            return state

    def forget(self, data_root: os.PathLike) -> None:
        """Drop what is remembered of one data root."""
        with self._lock:
            self._roots.pop(os.path.abspath(os.fspath(data_root)), None)

    def reset(self) -> None:
        """Forget every data root (the next query of each reads the tree afresh)."""
        with self._lock:
            self._roots.clear()


#: The process-wide instance used by :class:`RLA.query.catalog.Catalog`.
WARM = WarmCaches()
