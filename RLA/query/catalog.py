"""The run index of a data root: kept in step with the directory tree, queried in SQL.

The index is ``<data_root>/.rla_index.sqlite`` (:mod:`RLA.query.index_file`), a disposable
cache; the directory tree is the source of truth. Every query first refreshes its scope
(:mod:`RLA.query.refresh`: changed folders listed again, live runs ``stat``\\ ed, settled
runs only when due), then reads only the rows its filters select
(:meth:`Catalog.fetch`, with the ``where`` compiled by :mod:`RLA.query.sqlwhere`). What one
process verified is trusted by the next through the file; several processes may query and
refresh it at once.

A damaged run (its record has problems) is never stored: it is read again on every query,
so a run repaired by hand (or by a later pull) shows up at once, and no failure is cached.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from RLA.layout import INDEX_DB, LOG, RunLayout, type_root
from RLA.query.index_file import IndexFile
from RLA.query.records import RunRecord, read_record
from RLA.query.refresh import ProgressFn, refresh
from RLA.query.stored import decode
from RLA.query.tree import layout_of
from RLA.query.warm import RECHECK_S

__all__ = ["Catalog", "ProgressFn"]


def _flags(archived: Optional[bool]) -> List[bool]:
    return [False, True] if archived is None else [archived]


class Catalog:
    """The run index of one data root (a context manager; ``close()`` is idempotent).

    Args:
        data_root: the database root.
        path: the SQLite file (default ``<data_root>/.rla_index.sqlite``); ``":memory:"``
            keeps it in memory.
        workers: threads (or processes, for large cold builds) used to read runs.
        recheck_s: a settled run's files are ``stat``\\ ed again at most this long after its
            last check (see :mod:`RLA.query.warm`); 0 checks every run on every query.
    """

    def __init__(
        self,
        data_root: os.PathLike,
        path: Optional[os.PathLike] = None,
        workers: int = 4,
        recheck_s: float = RECHECK_S,
    ) -> None:
        self.data_root = Path(data_root)
        self.file = IndexFile(str(path) if path is not None else os.fspath(self.data_root / INDEX_DB))
        self.workers = max(1, workers)
        self.recheck_s = recheck_s
        #: ``log/`` of active (False) and archived (True) runs, where run files are stat'ed.
        self.log_roots = {flag: os.fspath(type_root(self.data_root, LOG, flag)) for flag in (False, True)}
        #: ``{key: record}`` of the damaged runs found by the last refresh (never stored).
        self.damaged: Dict[str, RunRecord] = {}
        #: Folders in scope whose name is not UTF-8, found by the last refresh (skipped, reported).
        self.undecodable: List[str] = []

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

    @property
    def generation(self) -> int:
        """Bumped by every change to a stored run (for caches of derived data)."""
        return self.file.generation()

    def reset(self) -> None:
        """Close and delete the database file (it is rebuilt from the tree on next use)."""
        self.close()
        if not self.in_memory:
            self.file.remove_files()

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        self.file.close()

    def __enter__(self) -> "Catalog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def scope_sql(task: Optional[str], flags: Sequence[bool]) -> Tuple[str, Tuple[Any, ...]]:
        """SQL condition (and its arguments) for the runs of ``task`` (and sub-tasks) and the
        archived ``flags``."""
        parts, args = [], []  # type: List[str], List[Any]
        if task is not None:
            parts.append("(task = ? OR substr(task, 1, ?) = ?)")
            args += [task, len(task) + 1, task + "/"]
        if len(flags) == 1:
            parts.append("archived = ?")
            args.append(int(flags[0]))
        return " AND ".join(parts) or "1", tuple(args)

    def refresh(
        self,
        task: Optional[str] = None,
        archived: Optional[bool] = False,
        progress: Optional[ProgressFn] = None,
        verify: bool = False,
    ) -> Dict[str, RunRecord]:
        """Bring the scope up to date with the tree (see :mod:`RLA.query.refresh`).

        Args:
            task: only this task (and its sub-tasks ``task/...``).
            archived: ``False`` active runs, ``True`` archived runs, ``None`` both.
            progress: ``progress(items, total)`` returns a bar with ``update(n)`` (tqdm).
            verify: list every folder and ``stat`` every run's files now, settled ones too.

        Returns:
            the damaged runs in scope (``{key: record}``; also in :attr:`damaged`).
        """
        try:
            self.damaged = refresh(self, task, _flags(archived), verify, progress)
        except sqlite3.DatabaseError as exc:  # corrupt while in use: only a cache, start over
            self.file.start_over(f"corrupt while reading ({exc})")
            self.damaged = refresh(self, task, _flags(archived), verify, progress)
        return self.damaged

    def fetch(
        self,
        task: Optional[str] = None,
        archived: Optional[bool] = False,
        where: str = "1",
        args: Sequence[Any] = (),
        limit: Optional[int] = None,
        offset: int = 0,
    ) -> Iterator[Tuple[RunLayout, RunRecord]]:
        """The stored runs of the scope that satisfy the SQL condition ``where``, in key order.

        Damaged runs are not stored (see :attr:`damaged`). A row whose stored text is not a
        record is read from disk instead.
        """
        scope, scope_args = self.scope_sql(task, _flags(archived))
        sql = f"SELECT key, record FROM runs WHERE {scope} AND ({where}) ORDER BY key"
        params: Tuple[Any, ...] = scope_args + tuple(args)
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params += (-1 if limit is None else int(limit), int(offset))
        for key, text in self.conn.execute(sql, params):
            layout = layout_of(self.data_root, key)
            record = decode(text)
            yield layout, record if record is not None else read_record(layout, full_info=False)

    def records(
        self,
        task: Optional[str] = None,
        archived: Optional[bool] = False,
        progress: Optional[ProgressFn] = None,
        verify: bool = False,
    ) -> List[Tuple[RunLayout, RunRecord]]:
        """Refresh the scope and return every run in it (damaged ones too), in key order."""
        damaged = self.refresh(task, archived, progress, verify)
        pairs = list(self.fetch(task, archived))
        pairs += [(layout_of(self.data_root, key), record) for key, record in damaged.items()]
        pairs.sort(key=lambda pair: ("arc:" if pair[0].archived else "") + pair[0].relative)
        return pairs

    def task_counts(self, archived: Optional[bool] = False) -> Dict[str, int]:
        """``{task: readable runs}`` of the scope (refreshed first), in SQL."""
        self.refresh(None, archived)
        scope, args = self.scope_sql(None, _flags(archived))
        return dict(
            self.conn.execute(
                f"SELECT task, count(*) FROM runs WHERE {scope} GROUP BY task ORDER BY task", args
            )
        )

    def rebuild(self, progress: Optional[ProgressFn] = None) -> int:
        """Drop every row and re-read the whole tree; returns the number of runs indexed."""
        conn = self.conn
        for table in ("checks", "runs", "unread", "dirs"):
            conn.execute(f"DELETE FROM {table}")
        return len(self.records(archived=None, progress=progress))

    def count(self) -> int:
        """Rows currently stored (without refreshing)."""
        return self.file.count()


def mark_changed(data_root: os.PathLike, runs: Sequence[RunLayout]) -> None:
    """Tell the index that RLA itself rewrote files of ``runs`` (a sync pull, a resume in place).

    The next query ``stat``\\ s them again even if they were settled, so the change is seen at
    once instead of after the periodic re-check. The index is only a cache: without an index
    file nothing is done, and if the file cannot be written now the re-check still finds it.
    """
    from RLA.query.tree import run_key

    path = Path(data_root) / INDEX_DB
    keys = [(run_key(run),) for run in runs]
    if not keys or not path.is_file():
        return
    try:
        conn = sqlite3.connect(os.fspath(path), timeout=5.0, isolation_level=None)
        try:
            conn.executemany("UPDATE checks SET settled = 0 WHERE key = ?", keys)
        finally:
            conn.close()
    except sqlite3.Error:
        pass
