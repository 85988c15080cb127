"""The SQLite file that caches run records: open (WAL, busy timeout), validate, rebuild, read, write.

It is only a cache (:mod:`RLA.query.catalog` decides what goes in): a missing, old-format
or corrupt file is deleted and started over; a file another process holds longer than the
busy timeout, a read-only data root or a filesystem SQLite cannot lock fall back to an
in-memory database, and a write that cannot be made is skipped (the answer came from disk).

Tables: ``runs`` (one row per readable run on disk: its record, the file signature it was read
from, and the columns the
``where`` compiler reads: ``status``, ``start_time``, ``pjson``/``mjson`` for SQLite's JSON
functions; ``idx`` .. ``param_source``, the cells of a listing, with ``plain`` saying they
are exactly the record's, see :mod:`RLA.query.csv_stream`), ``checks`` (per stored run, whether it
is settled, when its files were last checked, and the signature, status, archived flag and
task its check reads (copied from its ``runs`` row when that is written): a narrow table of its own, so the periodic re-check of 100,000 settled
runs rewrites small rows, never the large ``runs`` rows; see :mod:`RLA.query.live`), ``dirs`` (directory listings with their mtimes, see :mod:`RLA.query.tree`) and
``meta`` (schema version; ``generation``, bumped by every write that changes a run;
``due_from``, a bound on the settled runs' check times, see :data:`LOWER_DUE`).
``unread`` holds the runs on disk without a stored record (damaged, or not read yet): they
are read from disk on every query, so no failure is ever cached.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Iterable, Optional, Sequence, Tuple

#: "5": the listing columns of ``rla list --format csv``; "6": their value types (``shape``,
#: ``tres``, see :mod:`RLA.query.csv_survey`); "7": ``settled``/``checked_at`` moved from ``runs``
#: to ``checks``; "8": hyper-parameter texts holding a NUL character are not ``exact``. Older files are rebuilt.
SCHEMA_VERSION = "8"
BUSY_TIMEOUT_S = 30.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    day TEXT NOT NULL,
    task TEXT NOT NULL,
    archived INTEGER NOT NULL,
    sig TEXT NOT NULL,
    status TEXT,
    start_time TEXT,
    exact INTEGER NOT NULL,
    pjson TEXT,
    mjson TEXT,
    record TEXT NOT NULL,
    idx TEXT NOT NULL,
    end_time TEXT,
    host TEXT,
    ip TEXT,
    parent TEXT,
    time_step,
    n_rows INTEGER,
    param_source TEXT,
    plain INTEGER NOT NULL,
    tz TEXT NOT NULL,
    shape TEXT NOT NULL,
    tres INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_day ON runs(day);
CREATE INDEX IF NOT EXISTS runs_task ON runs(task);
-- rla list --format csv reads its columns, newest first, from this index alone (no record).
CREATE INDEX IF NOT EXISTS runs_list ON runs(archived, start_time DESC, idx, key, task, status, end_time, host,
    ip, parent, time_step, n_rows, param_source, exact, plain, tz, pjson, mjson);
-- a where's scan (sqlwhere reads these columns): narrow entries, about half the time of runs_list
CREATE INDEX IF NOT EXISTS runs_where ON runs(archived, task, exact, status, start_time, pjson, mjson, key);
-- the survey of a listing's value types: one GROUP BY in this index's order (no sort)
CREATE INDEX IF NOT EXISTS runs_survey ON runs(archived, shape, tres, tz, exact, plain, status, task);
-- per stored run, what a check of its files reads and writes: narrow rows, so the periodic
-- re-check of every settled run rewrites no runs row; ``checked_at`` is stored up to a
-- quarter of the period earlier than the check was made, by ``jitter`` (0..1, fixed per run:
-- see RLA.query.warm.stamp). No index over ``checked_at``: the due runs are found by a scan of
-- these narrow rows (~15 ms at 100,000 runs), so one UPDATE rewrites them in place, in order.
CREATE TABLE IF NOT EXISTS checks (
    key TEXT PRIMARY KEY,
    settled INTEGER NOT NULL,
    checked_at REAL NOT NULL,
    jitter REAL NOT NULL,
    sig TEXT NOT NULL,
    status TEXT,
    archived INTEGER NOT NULL,
    task TEXT NOT NULL
) WITHOUT ROWID;
-- the runs that are not settled (checked on every query): few, found at once
CREATE INDEX IF NOT EXISTS checks_live ON checks(key, sig, status, archived, task) WHERE settled = 0;
CREATE TRIGGER IF NOT EXISTS runs_gone AFTER DELETE ON runs BEGIN
    DELETE FROM checks WHERE key = old.key;
END;
CREATE TABLE IF NOT EXISTS unread (
    key TEXT PRIMARY KEY,
    day TEXT NOT NULL,
    task TEXT NOT NULL,
    archived INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS unread_day ON unread(day);
CREATE TABLE IF NOT EXISTS dirs (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    trusted INTEGER NOT NULL,
    day TEXT,
    names TEXT NOT NULL
);
"""
#: The columns of a run's row as :func:`RLA.query.stored.encode` makes it, in order: those of
#: ``runs`` and, at :data:`CHECK_AT`, ``settled`` and ``checked_at`` (stored in ``checks``, see
#: :func:`RLA.query.stored.put_runs`).
RUN_COLUMNS = (
    "key",
    "day",
    "task",
    "archived",
    "sig",
    "settled",
    "checked_at",
    "status",
    "start_time",
    "exact",
    "pjson",
    "mjson",
    "record",
    "idx",
    "end_time",
    "host",
    "ip",
    "parent",
    "time_step",
    "n_rows",
    "param_source",
    "plain",
    "tz",
    "shape",
    "tres",
)
#: Where ``settled`` and ``checked_at`` are in a row of :data:`RUN_COLUMNS`.
CHECK_AT = RUN_COLUMNS.index("settled")
#: The columns of the ``runs`` table.
STORED_COLUMNS = RUN_COLUMNS[:CHECK_AT] + RUN_COLUMNS[CHECK_AT + 2 :]
INSERT_RUN = f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * len(STORED_COLUMNS))})"
#: The columns of ``checks``, in order.
CHECK_COLUMNS = ("key", "settled", "checked_at", "jitter", "sig", "status", "archived", "task")
INSERT_CHECK = f"INSERT OR REPLACE INTO checks VALUES ({', '.join('?' * len(CHECK_COLUMNS))})"
#: ``meta['due_from']``: a whole second at or before the stored check time of every settled run,
#: so a query whose due cutoff is not later finds no run due without scanning ``checks``. Every
#: writer keeps it a lower bound: :func:`RLA.query.stored.put_runs` lowers it, a re-check
#: (:mod:`RLA.query.live`) recomputes it; absent, the query scans.
LOWER_DUE = (
    "INSERT INTO meta VALUES ('due_from', ?) ON CONFLICT(key) DO UPDATE "
    "SET value = min(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))"
)
RESET_DUE = (
    "INSERT OR REPLACE INTO meta VALUES ('due_from', "
    f"(SELECT coalesce(CAST(min(checked_at) AS INTEGER) - 1, {2**62}) FROM checks WHERE settled = 1))"
)


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
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
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
        # A file of the right version but another layout (hand-made, truncated) is refused too.
        conn.execute(f"SELECT {', '.join(STORED_COLUMNS)} FROM runs LIMIT 1").fetchall()
        conn.execute(f"SELECT {', '.join(CHECK_COLUMNS)} FROM checks LIMIT 1").fetchall()
        conn.execute("SELECT path, mtime_ns, trusted, day, names FROM dirs LIMIT 1").fetchall()
        conn.execute("SELECT key, day, task, archived FROM unread LIMIT 1").fetchall()
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
                # Corrupt, old or foreign file: it is only a cache, so drop it and start over.
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

    def start_over(self, reason: str) -> None:
        """Delete a file found corrupt while in use and open an empty one."""
        self.close()
        if not self.in_memory:
            self.remove_files()
        self.rebuilt_reason = reason

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "IndexFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generation(self) -> int:
        """A number bumped by every write that changed a run (0 for a new file)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def begin(self) -> bool:
        """Start a write transaction; False when the file cannot be written now (then skip)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            return True
        except sqlite3.OperationalError:
            return False

    def commit(self, changed_runs: bool) -> bool:
        """Commit (bumping the generation when runs changed); a failure rolls back (False)."""
        conn = self.conn
        try:
            if changed_runs:
                conn.execute(
                    "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
                    "SET value = CAST(value AS INTEGER) + 1"
                )
            conn.execute("COMMIT")
            return True
        except sqlite3.OperationalError:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False

    def fall_back_to_memory(self) -> None:
        """Continue with an empty private in-memory index (the file cannot be written now)."""
        self.close()
        self.in_memory = True
        self.path = ":memory:"
        self._conn = self._connect(":memory:")

    def rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def in_chunks(self, sql: str, values: Sequence[str], extra: Tuple = ()) -> Iterable[tuple]:
        """Run ``sql`` (with one ``{}`` for a ``?, ?, ...`` list) over ``values`` in chunks."""
        for lo in range(0, len(values), 500):
            chunk = list(values[lo : lo + 500])
            yield from self.conn.execute(sql.format(", ".join("?" * len(chunk))), tuple(chunk) + extra)

    def count(self) -> int:
        """Rows currently stored."""
        return int(self.conn.execute("SELECT count(*) FROM runs").fetchone()[0])
