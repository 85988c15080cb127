"""The SQLite catalog ``<data_root>/.rla_index.sqlite``: a disposable cache of run records.

The directory tree is the source of truth. Every :meth:`Catalog.records` call walks the
tree (cheap: directory listings and two ``stat`` calls per run), re-reads only the runs
whose files changed (by mtime and size), drops rows of runs that are gone, and so never
hides a run that exists on disk. The database uses WAL and a busy timeout so several
processes may query and refresh it at once; a missing, old-format or corrupt database is
rebuilt, and when the data root is read-only the catalog lives in memory.
"""
from __future__ import annotations

import json
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from RLA.layout import ARCHIVE_TESTER, CODE, INDEX_DB, LOG, RunLayout, iter_run_dirs
from RLA.query.records import RunRecord, read_record, signature

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_S = 30.0
#: Data types whose presence makes a run (a run with only checkpoints is found by layout tools).
DISCOVERY_TYPES = (LOG, CODE, ARCHIVE_TESTER)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    archived INTEGER NOT NULL,
    sig TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_task ON runs(task);
"""

ProgressFn = Callable[[Iterable[RunLayout], int], Iterable[RunLayout]]


def run_key(run: RunLayout) -> str:
    """Catalog key of a run: its relative path, prefixed by ``arc:`` when archived."""
    return ("arc:" if run.archived else "") + run.relative


def discover(data_root: os.PathLike, task: Optional[str] = None,
             archived: Optional[bool] = False) -> Dict[str, RunLayout]:
    """Every run on disk (by key), found under ``log/``, ``code/`` or ``archive_tester/``.

    Args:
        archived: ``False`` active runs only, ``True`` archived only, ``None`` both.
    """
    flags = [False, True] if archived is None else [archived]
    found: Dict[str, RunLayout] = {}
    for flag in flags:
        for data_type in DISCOVERY_TYPES:
            for run in iter_run_dirs(data_root, data_type, task=task, archived=flag):
                found.setdefault(run_key(run), run)
    return found


def _in_scope(task_of_row: str, task: Optional[str]) -> bool:
    return task is None or task_of_row == task or task_of_row.startswith(task + "/")


class Catalog:
    """The run index of one data root (a context manager; ``close()`` is idempotent).

    Args:
        data_root: the database root.
        path: the SQLite file (default ``<data_root>/.rla_index.sqlite``); ``":memory:"``
            keeps it in memory.
        workers: threads used to read changed runs.
    """

    def __init__(self, data_root: os.PathLike, path: Optional[os.PathLike] = None,
                 workers: int = 4) -> None:
        self.data_root = Path(data_root)
        self.path = str(path) if path is not None else os.fspath(self.data_root / INDEX_DB)
        self.workers = max(1, workers)
        self.in_memory = self.path == ":memory:"
        #: Set when the file had to be rebuilt (missing/old/corrupt) on open.
        self.rebuilt_reason: Optional[str] = None
        self._conn: Optional[sqlite3.Connection] = None

    # -- connection ------------------------------------------------------------------
    def _connect(self, path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"schema version {row[0]} != {SCHEMA_VERSION}")
        conn.execute("SELECT count(*) FROM runs").fetchone()
        return conn

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection (opened, and rebuilt if unusable, on first use)."""
        if self._conn is not None:
            return self._conn
        if not self.in_memory:
            existed = os.path.exists(self.path)
            try:
                self._conn = self._connect(self.path)
                if not existed:
                    self.rebuilt_reason = "missing"
                return self._conn
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
                    # Another process holds it longer than the busy timeout: never delete a
                    # file in use; answer from memory this time.
                    self.in_memory = True
                    self._conn = self._connect(":memory:")
                    return self._conn
                # Corrupt or foreign file: it is only a cache, so drop it and start over.
                self.rebuilt_reason = f"unusable ({exc})"
                try:
                    self._remove_files()
                    self._conn = self._connect(self.path)
                    return self._conn
                except (sqlite3.Error, OSError):
                    pass
            except OSError:
                pass
        # Read-only data root (or a filesystem SQLite cannot lock): keep the cache in memory.
        self.in_memory = True
        self._conn = self._connect(":memory:")
        return self._conn

    def reset(self) -> None:
        """Close and delete the database file (it is rebuilt from the tree on next use)."""
        self.close()
        if not self.in_memory:
            self._remove_files()

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- contents --------------------------------------------------------------------
    def _cached(self, task: Optional[str]) -> Dict[str, Tuple[str, str]]:
        if task is None:
            rows = self.conn.execute("SELECT key, sig, record FROM runs")
        else:
            rows = self.conn.execute(
                "SELECT key, sig, record FROM runs WHERE task = ? OR substr(task, 1, ?) = ?",
                (task, len(task) + 1, task + "/"))
        return {key: (sig, record) for key, sig, record in rows}

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
        rows = [(run_key(run), run.task, int(run.archived), rec.signature, json.dumps(rec.__dict__))
                for run, rec in upserts]
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?)", rows)
            conn.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in deletes])
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            # Locked for longer than the busy timeout or read-only: the answer is still
            # correct (it came from disk); only the cache update is skipped.
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def records(self, task: Optional[str] = None, archived: Optional[bool] = False,
                progress: Optional[ProgressFn] = None) -> List[Tuple[RunLayout, RunRecord]]:
        """Bring the catalog up to date with the tree and return the runs in scope.

        Args:
            task: only this task (and its sub-tasks ``task/...``).
            archived: ``False`` active runs, ``True`` archived runs, ``None`` both.
            progress: wraps the iterable of runs to re-read (e.g. a tqdm bar).
        """
        on_disk = discover(self.data_root, task, archived)
        try:
            cached = self._cached(task)
        except sqlite3.DatabaseError:
            self.close()
            self._remove_files()
            self.rebuilt_reason = "corrupt while reading"
            cached = self._cached(task)
        result: Dict[str, RunRecord] = {}
        stale: List[Tuple[RunLayout, str]] = []
        log_roots: Dict[bool, str] = {}
        for key, run in on_disk.items():
            if run.archived not in log_roots:
                log_roots[run.archived] = os.fspath(run.type_root(LOG))
            sig = signature(run, log_roots[run.archived])
            hit = cached.get(key)
            if hit is not None and hit[0] == sig:
                try:
                    result[key] = RunRecord(**json.loads(hit[1]))
                    continue
                except (ValueError, TypeError):
                    pass
            stale.append((run, sig))
        fresh = self._read_many(stale, progress)
        for (run, _), rec in zip(stale, fresh):
            result[run_key(run)] = rec
        wanted = {False: archived is not True, True: archived is not False}
        gone = [key for key in cached if key not in on_disk
                and wanted[key.startswith("arc:")]]
        if fresh or gone:
            self._write([(run, rec) for (run, _), rec in zip(stale, fresh)], gone)
        return [(on_disk[key], result[key]) for key in sorted(on_disk)]

    def rebuild(self, progress: Optional[ProgressFn] = None) -> int:
        """Drop every row and re-read the whole tree; returns the number of runs indexed."""
        conn = self.conn
        conn.execute("DELETE FROM runs")
        return len(self.records(archived=None, progress=progress))

    def count(self) -> int:
        """Rows currently stored (without refreshing)."""
        return int(self.conn.execute("SELECT count(*) FROM runs").fetchone()[0])
