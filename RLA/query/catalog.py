"""Keep the run index of a data root in step with its directory tree and answer from it.

The index is ``<data_root>/.rla_index.sqlite`` (:mod:`RLA.query.index_file`), a disposable
cache; the directory tree is the source of truth. Every :meth:`Catalog.records` call re-checks
the tree's directories (only those whose mtime changed are listed again, see
:mod:`RLA.query.tree`), so a run that exists on disk is never hidden and a deleted one
never shown; it ``stat``\\ s the files of every run that may still change, re-reads the
runs whose files changed (by mtime and size), and drops rows of runs that are gone. What a
process learnt stays in memory (:mod:`RLA.query.warm`), so repeated queries touch SQLite
only when something changed. Several processes may query and refresh it at once.

A damaged run (its record has problems) is never answered from memory or from the file:
it is read again on every query, so a run repaired by hand (or by a later pull) shows up
at once, whichever of its files was fixed, and no failure is ever cached.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from RLA.layout import INDEX_DB, LOG, RunLayout, type_root
from RLA.query.records import RunRecord, read_record, signature_and_mtime
from RLA.query.tree import run_key
from RLA.query.index_file import IndexFile
from RLA.query.warm import RECHECK_S, WARM, Entry, RootState, View, is_settled

ProgressFn = Callable[[Iterable[RunLayout], int], Iterable[RunLayout]]


def _in_scope(task_of_row: str, task: Optional[str]) -> bool:
    return task is None or task_of_row == task or task_of_row.startswith(task + "/")


class Catalog:
    """The run index of one data root (a context manager; ``close()`` is idempotent).

    Args:
        data_root: the database root.
        path: the SQLite file (default ``<data_root>/.rla_index.sqlite``); ``":memory:"``
            keeps it in memory.
        workers: threads used to read changed runs.
        recheck_s: seconds a settled run's files go without a ``stat`` (see
            :mod:`RLA.query.warm`); 0 checks every run on every query.
    """

    def __init__(self, data_root: os.PathLike, path: Optional[os.PathLike] = None,
                 workers: int = 4, recheck_s: float = RECHECK_S) -> None:
        self.data_root = Path(data_root)
        self.file = IndexFile(str(path) if path is not None else os.fspath(self.data_root / INDEX_DB))
        self.workers = max(1, workers)
        self.recheck_s = recheck_s
        #: ``log/`` of active (False) and archived (True) runs, where run files are stat'ed.
        self.log_roots = {flag: os.fspath(type_root(self.data_root, LOG, flag)) for flag in (False, True)}

    @property
    def path(self) -> str:
        """The SQLite file (``":memory:"`` when kept in memory)."""
        return self.file.path

    @property
    def in_memory(self) -> bool:
        """Whether the index lives in memory (read-only data root, file held elsewhere)."""
        return self.file.in_memory

    @property
    def rebuilt_reason(self) -> Optional[str]:
        """Why the file had to be rebuilt (missing/old/corrupt), None if it was usable."""
        return self.file.rebuilt_reason

    @property
    def conn(self) -> sqlite3.Connection:
        """The open SQLite connection (opened, and rebuilt if unusable, on first use)."""
        return self.file.conn

    def reset(self) -> None:
        """Close and delete the database file (it is rebuilt from the tree on next use)."""
        self.close()
        WARM.forget(self.data_root)
        if not self.in_memory:
            self.file.remove_files()

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        self.file.close()

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- contents --------------------------------------------------------------------
    def _read_many(self, runs: List[Tuple[RunLayout, str]],
                   progress: Optional[ProgressFn]) -> List[RunRecord]:
        items: Iterable[Tuple[RunLayout, str]] = runs
        if progress is not None:
            items = progress(runs, len(runs))  # type: ignore[arg-type]
        if len(runs) < 16 or self.workers == 1:
            return [read_record(run, sig, full_info=False) for run, sig in items]
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(lambda pair: read_record(pair[0], pair[1], full_info=False), items))

    def _write(self, upserts: List[Tuple[RunLayout, RunRecord]], deletes: List[str]) -> None:
        self.file.write([(run_key(run), run.task, int(run.archived), rec.signature, json.dumps(rec.__dict__))
                         for run, rec in upserts], deletes)

    @property
    def state(self) -> RootState:
        """What this process remembers of the data root (see :mod:`RLA.query.warm`)."""
        return WARM.get(self.data_root)

    def _db_changed(self, state: RootState) -> bool:
        """Whether the SQLite file is not as this process last left it (or was never seen)."""
        if self.in_memory:
            return self.path not in state.db_stats
        return state.db_stats.get(self.path, ()) != self.file.stat()

    def _remember_db(self, state: RootState) -> None:
        state.db_stats[self.path] = (0, 0, 0) if self.in_memory else self.file.stat()

    def records(self, task: Optional[str] = None, archived: Optional[bool] = False,
                progress: Optional[ProgressFn] = None, verify: bool = False) -> List[Tuple[RunLayout, RunRecord]]:
        """Bring the catalog up to date with the tree and return the runs in scope.

        Args:
            task: only this task (and its sub-tasks ``task/...``).
            archived: ``False`` active runs, ``True`` archived runs, ``None`` both.
            progress: wraps the iterable of runs to re-read (e.g. a tqdm bar).
            verify: ``stat`` every run's files now, settled ones too (see :mod:`RLA.query.warm`).
        """
        state = WARM.get(self.data_root)
        with state.lock:
            scope = (task, archived)
            on_disk = state.tree.discover(task, archived)
            if not verify:
                unchanged = self._unchanged(state, scope)
                if unchanged is not None:
                    return unchanged
            pairs = self._records(state, on_disk, task, archived, progress, verify)
            self._remember_view(state, scope, pairs)
            return list(pairs)

    def _unchanged(self, state: RootState, scope: Tuple[Optional[str], Optional[bool]]
                   ) -> Optional[List[Tuple[RunLayout, RunRecord]]]:
        """The last answer for ``scope`` if nothing it covers can have changed, else None.

        It holds while no directory changed (tree version), no record changed (generation),
        the SQLite file is as this process left it, no settled run is due for its re-check,
        and a ``stat`` of every live run finds its files as they were.
        """
        view = state.views.get(scope)
        now = time.monotonic()
        if view is None or view.tree_version != state.tree.version or view.generation != state.generation \
                or now - view.oldest_check >= self.recheck_s or self._db_changed(state):
            return None
        now_ns = time.time_ns()
        for entry in view.live:
            run = entry.layout
            sig, newest = signature_and_mtime(run, self.log_roots[run.archived])
            if sig != entry.sig or entry.record.problems:
                return None
            entry.checked_at = now
            if is_settled(entry.record, newest, now_ns):
                return None  # still right, but the view's live list must be made anew
        return list(view.pairs)

    def _remember_view(self, state: RootState, scope: Tuple[Optional[str], Optional[bool]],
                       pairs: List[Tuple[RunLayout, RunRecord]]) -> None:
        entries = [state.entries[run_key(run)] for run, _ in pairs]
        settled = [entry.checked_at for entry in entries if entry.settled]
        state.views[scope] = View(state.tree.version, state.generation, pairs,
                                  [entry for entry in entries if not entry.settled],
                                  min(settled, default=time.monotonic()))

    def _records(self, state: RootState, on_disk: Dict[str, RunLayout], task: Optional[str],
                 archived: Optional[bool], progress: Optional[ProgressFn],
                 verify: bool) -> List[Tuple[RunLayout, RunRecord]]:
        now, now_ns = time.monotonic(), time.time_ns()
        # The SQLite file is only opened when this process has not seen it as it is now
        # (first query, another process wrote it, it was deleted or corrupted) or when a
        # run must be looked up or written.
        db_rows: Optional[Dict[str, Tuple[str, str]]] = None
        if self._db_changed(state):
            db_rows = self.file.rows(task)
        result: Dict[str, RunRecord] = {}
        stale: List[Tuple[str, RunLayout, str, int]] = []
        for key, run in on_disk.items():
            entry = state.entries.get(key)
            if entry is not None and entry.settled and not verify and now - entry.checked_at < self.recheck_s:
                result[key] = entry.record
                continue
            sig, newest = signature_and_mtime(run, self.log_roots[run.archived])
            if entry is not None and entry.sig == sig and not entry.record.problems:
                entry.checked_at, entry.settled = now, is_settled(entry.record, newest, now_ns)
                result[key] = entry.record
                continue
            if db_rows is None:
                db_rows = self.file.rows(task)
            hit = db_rows.get(key)
            if hit is not None and hit[0] == sig:
                try:
                    record = RunRecord(**json.loads(hit[1]))
                except (ValueError, TypeError, RecursionError):
                    pass
                else:
                    if record.problems:  # a damaged run is read again, never served from the file
                        stale.append((key, run, sig, newest))
                        continue
                    self._remember(state, key, run, sig, record, now, newest, now_ns)
                    result[key] = record
                    continue
            stale.append((key, run, sig, newest))
        fresh = self._read_many([(run, sig) for _, run, sig, _ in stale], progress)
        for (key, run, sig, newest), record in zip(stale, fresh):
            self._remember(state, key, run, sig, record, now, newest, now_ns)
            result[key] = record
        wanted = {False: archived is not True, True: archived is not False}
        gone: set = set()
        last = state.views.get((task, archived))
        if last is None or last.tree_version != state.tree.version:  # runs vanish only with a tree change
            gone = {key for key, entry in state.entries.items() if key not in on_disk
                    and wanted[entry.layout.archived] and _in_scope(entry.layout.task, task)}
        if db_rows is not None:
            gone.update(key for key in db_rows if key not in on_disk and wanted[key.startswith("arc:")])
        for key in gone:
            if state.entries.pop(key, None) is not None:
                state.bump()
        # Damaged runs are not stored: they are read again next time anyway.
        upserts = [(run, record) for (_, run, _, _), record in zip(stale, fresh) if not record.problems]
        if db_rows is not None:  # a new, rebuilt or behind file: put back what it lacks
            written = {key for key, _, _, _ in stale}
            upserts += [(on_disk[key], record) for key, record in result.items() if key not in written
                        and not record.problems and db_rows.get(key, ("",))[0] != record.signature]
        if upserts or gone:
            self._write(upserts, sorted(gone))
        if db_rows is not None or upserts or gone:
            self._remember_db(state)
        return [(run, result[key]) for key, run in on_disk.items()]

    @staticmethod
    def _remember(state: RootState, key: str, run: RunLayout, sig: str, record: RunRecord,
                  now: float, newest: int, now_ns: int) -> None:
        state.entries[key] = Entry(run, sig, record, now, is_settled(record, newest, now_ns))
        state.bump()

    def rebuild(self, progress: Optional[ProgressFn] = None) -> int:
        """Drop every row and re-read the whole tree; returns the number of runs indexed."""
        conn = self.conn
        conn.execute("DELETE FROM runs")
        WARM.forget(self.data_root)
        return len(self.records(archived=None, progress=progress))

    def count(self) -> int:
        """Rows currently stored (without refreshing)."""
        return self.file.count()
