"""How fresh the dashboard's view of the index is: one background refresh loop per server.

A query (:func:`RLA.query.select_runs`) first refreshes the index from the tree: it lists the
folders that changed and ``stat``\\ s the files of every run that is not yet settled. Right
after 10,000 runs were written that is every run, on every request. The dashboard is one
long-lived process, so it refreshes the whole index (every task, active and archived) in a
background thread instead, and answers requests from the index as of the last refresh:

* while the page is in use (a request in the last :data:`IDLE_S` seconds), a refresh starts
  :data:`PERIOD_S` seconds after the previous one ended, or twice its duration when that is
  longer, so the loop uses at most a third of a core however large the database;
* a request that finds the last refresh started more than :data:`STALE_S` seconds ago (the
  server was idle, or the loop failed) refreshes before answering.

So a change on disk is on the page within ``PERIOD_S + 3 x`` (one refresh's duration) while
the page is open, and never older than ``STALE_S`` plus one refresh. The status of the runs
on screen is not affected: ``/api/status`` reads their ``run.json`` on every poll.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from RLA.query import Catalog
from RLA.query.records import RunRecord
from RLA.query.tree import layout_of

#: Seconds between the end of one background refresh and the start of the next (at least).
PERIOD_S = 1.0
#: A request refreshes by itself when the last refresh started longer ago than this.
STALE_S = 10.0
#: The loop pauses when no request came for this long (an unwatched server does no work).
IDLE_S = 60.0


@dataclass(frozen=True)
class Snapshot:
    """What one refresh of the whole index found."""

    #: The index generation after the refresh (bumped by every change to a stored run).
    generation: int
    #: ``{key: record}`` of the damaged runs (never stored in the index).
    damaged: Dict[str, RunRecord]
    #: Folders whose name is not UTF-8 (skipped, reported).
    undecodable: List[str]
    #: ``time.monotonic()`` when the refresh started (what it saw is at least this fresh).
    started: float
    #: Seconds the refresh took.
    took: float
    #: The index lives in memory (read-only data root): each query must refresh its own.
    private: bool = False


class SnapshotCatalog(Catalog):
    """A :class:`Catalog` whose ``refresh()`` reports what the last background refresh found.

    :func:`RLA.query.select_runs` refreshes the catalog it is given before selecting; with
    this one the selection reads the index as the refresher left it, without walking the tree.
    """

    def __init__(self, data_root: os.PathLike, snapshot: Snapshot) -> None:
        super().__init__(data_root)
        self.snapshot = snapshot

    def refresh(
        self, task: Optional[str] = None, archived: Optional[bool] = False, *args: Any, **kw: Any
    ) -> Any:
        if self.snapshot.private or self.in_memory:  # nothing shared to read: do the real work
            return super().refresh(task, archived, *args, **kw)
        flags = [False, True] if archived is None else [archived]
        self.damaged = {
            key: record
            for key, record in self.snapshot.damaged.items()
            if _in_scope(layout_of(self.data_root, key), task, flags)
        }
        self.undecodable = list(self.snapshot.undecodable)
        return self.damaged


def _in_scope(layout: Any, task: Optional[str], flags: List[bool]) -> bool:
    in_task = task is None or layout.task == task or layout.task.startswith(task + "/")
    return in_task and layout.archived in flags


class Refresher:
    """Keeps the index of one data root fresh from a daemon thread (a context manager).

    Args:
        data_root: the database root.
        period_s, stale_s, idle_s: see :data:`PERIOD_S`, :data:`STALE_S`, :data:`IDLE_S`.
        on_refresh: called (in the refreshing thread) with the just refreshed catalog, e.g. to
            bring derived tables up to date (its time counts in the refresh's duration).
        worker: refresh in a child process (:mod:`RLA.ui.refresh_worker`), so the stat loop
            never holds this process's interpreter lock; the refresh falls back to this
            process when the child fails (and reports the error from here).
    """

    def __init__(
        self,
        data_root: os.PathLike,
        period_s: float = PERIOD_S,
        stale_s: float = STALE_S,
        idle_s: float = IDLE_S,
        on_refresh: Optional[Callable[[Catalog], Any]] = None,
        worker: bool = True,
    ) -> None:
        self.data_root = Path(data_root)
        self.period_s, self.stale_s, self.idle_s = period_s, stale_s, idle_s
        self.on_refresh = on_refresh
        self._snapshot: Optional[Snapshot] = None
        self._refreshing = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._last_request = 0.0
        self._thread: Optional[threading.Thread] = None
        self.error: Optional[BaseException] = None
        self._changed_at = float("-inf")
        self.worker: Any = None
        if worker:
            from RLA.ui.refresh_worker import RefreshWorker

            self.worker = RefreshWorker(self.data_root)

    def snapshot(self) -> Snapshot:
        """The latest snapshot, refreshing now when there is none or it is older than ``stale_s``."""
        self._last_request = time.monotonic()
        self._start()
        snap = self._snapshot
        if not self._usable(snap, time.monotonic() - self.stale_s):
            return self.refresh_now()
        return snap  # type: ignore[return-value]  # _usable() checked it is not None

    def _usable(self, snap: Optional[Snapshot], since: float) -> bool:
        """Whether ``snap`` started after ``since`` and after the last invalidate(), without error."""
        return snap is not None and self.error is None and snap.started >= max(since, self._changed_at)

    def invalidate(self) -> None:
        """Make the next request refresh before answering (after the dashboard moved runs):
        only a refresh started after this call is used."""
        self._changed_at = time.monotonic()

    def refresh_now(self) -> Snapshot:
        """Refresh in the calling thread (waits for a refresh already running, then reuses it
        if it is fresh); errors propagate to the caller."""
        asked = time.monotonic()
        with self._refreshing:
            snap = self._snapshot
            if self._usable(snap, asked - self.stale_s):
                return snap  # type: ignore[return-value]  # _usable() checked it is not None
            return self._refresh()

    def _refresh(self) -> Snapshot:
        started = time.monotonic()
        done = self._in_worker()
        with Catalog(self.data_root) as catalog:
            opened = catalog.conn is not None  # opened now: in memory when the file cannot be used
            if done is None or done[2] or catalog.in_memory or not opened:  # refresh here (and raise here)
                done = (catalog.refresh(None, None), list(catalog.undecodable), catalog.in_memory)
            if self.on_refresh is not None:
                self.on_refresh(catalog)
            snap = Snapshot(
                generation=catalog.generation,
                damaged=dict(done[0]),
                undecodable=list(done[1]),
                started=started,
                took=time.monotonic() - started,
                private=catalog.in_memory,
            )
        self._snapshot, self.error = snap, None
        return snap

    def _in_worker(self) -> Any:
        """The child process's refresh (None when there is no worker or it failed)."""
        from RLA.ui.refresh_worker import WorkerError

        if self.worker is None:
            return None
        try:
            return self.worker.refresh()
        except WorkerError:
            return None

    def _start(self) -> None:
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._loop, name="rla-ui-refresh", daemon=True)
            self._thread.start()
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            snap = self._snapshot
            idle = time.monotonic() - self._last_request > self.idle_s
            if idle or snap is None:  # idle: until the next request; none yet: a request makes it
                self._wake.wait(self.idle_s if idle else self.period_s)
                self._wake.clear()
                continue
            rest = max(self.period_s, 2 * snap.took) - (time.monotonic() - snap.started - snap.took)
            if rest > 0 and self._stop.wait(rest):
                return
            try:
                with self._refreshing:
                    self._refresh()
            except Exception as exc:  # surfaces on the next request, which refreshes itself
                self.error = exc
                self._stop.wait(self.period_s)

    def close(self) -> None:
        """Stop the loop (idempotent)."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=30)
        if self.worker is not None:
            self.worker.close()

    def __enter__(self) -> "Refresher":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
