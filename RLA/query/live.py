"""Runs a query looks at again (not settled, due for the periodic re-check, unread), cheaply.

Each such run's ``run.json`` and ``progress.csv`` are ``stat``\\ ed (its signature), so a
running run's new row, a status change, and any edit of a run written less than
:data:`RLA.query.warm.SETTLE_S` ago are seen by the next query; settled runs are looked at only
when due for the periodic re-check or with ``verify``. The cost per run is two ``stat`` calls:
paths are built as text from the catalog key (no :class:`RunLayout`, no decoded record but a
running run's), and only runs whose signature changed are read again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from RLA.layout import PROGRESS_CSV, RUN_INFO_FILE, RunLayout
from RLA.query.index_file import INSERT_RUN
from RLA.query.records import RunRecord, _stat_sig, signature_and_mtime
from RLA.query.stored import decode, encode, unread_row
from RLA.query.tree import layout_of, run_key
from RLA.query.warm import SETTLE_S, is_settled

if TYPE_CHECKING:
    from RLA.query.catalog import Catalog, ProgressFn

#: Stored statuses whose runs are settled once their files are quiet (no record needed).
_QUIET_SETTLES = ("finished", "crashed", "killed", "unknown")


def _rows(catalog: "Catalog", scope: str, args: tuple, verify: bool, now: float) -> List[tuple]:
    """``(key, sig, settled, status, archived, record or None)`` of the runs to check.

    The columns read come from the ``runs_live`` index alone (no table row is touched); the
    records are fetched for the running runs only (their process may be gone: settled then).
    """
    select = "SELECT key, sig, settled, status, archived FROM runs"
    conn = catalog.conn
    if verify:
        rows = conn.execute(f"{select} WHERE {scope}", args).fetchall()
    else:  # two lookups of runs_live: the live runs, and the settled ones due for a check
        rows = conn.execute(f"{select} WHERE settled = 0 AND {scope}", args).fetchall()
        rows += conn.execute(
            f"{select} WHERE settled = 1 AND checked_at < ? AND {scope}", (now - catalog.recheck_s,) + args
        ).fetchall()
    running = dict(
        conn.execute(
            # runs_live finds the few unsettled rows (an index on archived would scan them all)
            f"SELECT key, record FROM runs INDEXED BY runs_live WHERE settled = 0 AND status = 'running' AND {scope}",
            args,
        )
    )
    unread = f"SELECT key, archived FROM unread WHERE {scope}"
    return [row + (running.get(row[0]),) for row in rows] + [
        (key, None, 0, None, archived, None) for key, archived in conn.execute(unread, args)
    ]


def full_signature(catalog: "Catalog", key: str, log_dir: str) -> Tuple[str, int]:
    """:func:`RLA.query.records.signature_and_mtime` of a stored run, from text paths."""
    info = _stat_sig(log_dir + "/" + RUN_INFO_FILE)
    if info[0] == "-":  # legacy / synced runs: every fallback source counts
        layout = layout_of(catalog.data_root, key)
        return signature_and_mtime(layout, catalog.log_roots[layout.archived])
    progress = _stat_sig(log_dir + "/" + PROGRESS_CSV)
    return f"{info[0]}|{progress[0]}", max(info[1], progress[1])


def check_live(
    catalog: "Catalog",
    task: Optional[str],
    flags: List[bool],
    verify: bool,
    skip: Set[str],
    progress: Optional["ProgressFn"],
    now: float,
) -> Optional[Dict[str, RunRecord]]:
    """Stat the runs that may have changed (see the module docstring); read again those whose
    files did.

    Returns:
        the damaged runs' records, or None when the changes could not be written.
    """
    from RLA.query.refresh import read_runs

    scope, args = catalog.scope_sql(task, flags)
    now_ns = time.time_ns()
    roots = catalog.log_roots
    reread: List[RunLayout] = []
    updates: List[Tuple[int, float, str]] = []
    for key, sig, settled, status, archived, text in _rows(catalog, scope, args, verify, now):
        if key in skip:
            continue
        log_dir = roots[bool(archived)] + "/" + (key[4:] if archived else key)
        current, newest = full_signature(catalog, key, log_dir)
        record = decode(text) if text is not None else None
        if sig is None or current != sig or (not settled and status == "running" and record is None):
            reread.append(layout_of(catalog.data_root, key))
            continue
        quiet = newest != 0 and now_ns - newest >= SETTLE_S * 1e9
        now_settled = (
            bool(settled)
            or (record is not None and is_settled(record, newest, now_ns))
            or (status in _QUIET_SETTLES and quiet)
        )  # ended (or no run.json) and quiet: see is_settled
        if now_settled != bool(settled) or settled:
            updates.append((int(now_settled), now, key))
    fresh = read_runs(reread, catalog.workers, progress)
    if (reread or updates) and not _write_live(catalog, reread, fresh, updates, now):
        return None
    return {run_key(layout): rec for layout, (_, _, rec) in zip(reread, fresh) if rec.problems}


def _write_live(
    catalog: "Catalog",
    reread: List[RunLayout],
    fresh: List[Tuple[str, int, RunRecord]],
    updates: List[Tuple[int, float, str]],
    now: float,
) -> bool:
    file = catalog.file
    if not file.begin():
        return False
    try:
        conn = file.conn
        conn.executemany("UPDATE runs SET settled = ?, checked_at = ? WHERE key = ?", updates)
        now_ns = time.time_ns()
        for layout, (sig, newest, rec) in zip(reread, fresh):
            key = unread_row(layout)
            if rec.problems:  # never cached: it stays (or becomes) unread
                conn.execute("DELETE FROM runs WHERE key = ?", (key[0],))
                conn.execute("INSERT OR REPLACE INTO unread VALUES (?, ?, ?, ?)", key)
            else:
                conn.execute("DELETE FROM unread WHERE key = ?", (key[0],))
                conn.execute(INSERT_RUN, encode(layout, rec, sig, is_settled(rec, newest, now_ns), now))
        return file.commit(bool(reread))
    except BaseException:
        file.rollback()
        raise
