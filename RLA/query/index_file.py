"""The SQLite file that caches run records: open (WAL, busy timeout), validate, rebuild, read, write.

It is only a cache (:mod:`RLA.query.catalog` decides what goes in): a missing, old-format
or corrupt file is deleted and started over; a file another process holds longer than the
busy timeout, a read-only data root or a filesystem SQLite cannot lock fall back to an
in-memory database, and a write that cannot be made is skipped (the answer came from disk).
"""
from __future__ import annotations

import os
import sqlite3
from typing import Dict, Optional, Sequence, Tuple

#: "3": records are checked by RLA.query.info_schema and the size limits of RLA.query.records
#: (older files may hold unchecked ones, which are then rebuilt from the tree).
SCHEMA_VERSION = "3"
BUSY_TIMEOUT_S = 30.0
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
#: A row of the ``runs`` table: key, task, archived, signature, record JSON.
Row = Tuple[str, str, int, str, str]


class IndexFile:
    """One SQLite cache file (a context manager; ``close()`` is idempotent).

    Args:
        path: the file; ``":memory:"`` keeps it in memory.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.in_memory = path == ":memory:"
        #: Set when the file had to be rebuilt (missing/old/corrupt).
        self.rebuilt_reason: Optional[str] = None
        self._conn: Optional[sqlite3.Connection] = None

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

    def remove_files(self) -> None:
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
                    self.remove_files()
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

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "IndexFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stat(self) -> Optional[Tuple[int, int, int]]:
        """Identity of the file's current contents (inode, size, mtime); None if missing."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def rows(self, task: Optional[str] = None) -> Dict[str, Tuple[str, str]]:
        """``{key: (signature, record JSON)}`` of one task and its sub-tasks (or all).

        A file found corrupt while reading is deleted and started over (empty).
        """
        try:
            return self._rows(task)
        except sqlite3.DatabaseError:
            self.close()
            self.remove_files()
            self.rebuilt_reason = "corrupt while reading"
            return self._rows(task)

    def _rows(self, task: Optional[str]) -> Dict[str, Tuple[str, str]]:
        if task is None:
            rows = self.conn.execute("SELECT key, sig, record FROM runs")
        else:
            rows = self.conn.execute(
                "SELECT key, sig, record FROM runs WHERE task = ? OR substr(task, 1, ?) = ?",
                (task, len(task) + 1, task + "/"))
        return {key: (sig, record) for key, sig, record in rows}

    def write(self, rows: Sequence[Row], deletes: Sequence[str]) -> None:
        """Insert or replace ``rows`` and delete the ``deletes`` keys in one transaction."""
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

    def count(self) -> int:
        """Rows currently stored."""
        return int(self.conn.execute("SELECT count(*) FROM runs").fetchone()[0])
