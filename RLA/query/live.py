"""Runs a query looks at again (not settled, due for the periodic re-check, unread), cheaply.

Each such run's ``run.json`` and ``progress.csv`` are ``stat``\\ ed (its signature), so a
running run's new row, a status change, and any edit of a run written less than
:data:`RLA.query.warm.SETTLE_S` ago are seen by the next query; settled runs are looked at only
when due for the periodic re-check or with ``verify``. The cost per run is two ``stat`` calls:
paths are built as text from the catalog key (no :class:`RunLayout`, no decoded record but a
running run's), and only runs whose signature changed are read again (their ``runs`` row
rewritten). A check that finds nothing changed writes only the run's narrow ``checks`` row
(its check time: one ``UPDATE`` for all the settled runs checked, see :func:`_write_live`):
the re-check of 100,000 settled runs rewrites none of their large ``runs`` rows nor the
indexes over them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from RLA.layout import PROGRESS_CSV, RUN_INFO_FILE, RunLayout
from RLA.query.index_file import RESET_DUE
from RLA.query.records import RunRecord, _stat_sig, signature_and_mtime
from RLA.query.stored import decode, encode, put_runs, unread_row
from RLA.query.tree import layout_of, run_key
from RLA.query.warm import SETTLE_S, SPREAD, is_settled, stamp

if TYPE_CHECKING:
    from RLA.query.catalog import Catalog, ProgressFn

#: Stored statuses whose runs are settled once their files are quiet (no record needed).
_QUIET_SETTLES = ("finished", "crashed", "killed", "unknown")


#: The columns a check reads (from the narrow ``checks`` rows: no ``runs`` row is touched).
_SELECT = "SELECT key, sig, settled, status, archived FROM checks"


def _rows(catalog: "Catalog", scope: str, args: tuple, verify: bool, now: float) -> List[tuple]:
    """``(key, sig, settled, status, archived, record or None)`` of the runs to check.

    The live runs come from the ``checks_live`` index, the due ones from a scan of ``checks``;
    the records are fetched for the running runs only (their process may be gone: settled then).
    """
    conn = catalog.conn
    if verify:  # every run; one without a checks row (an index edited by hand) is read again
        rows = conn.execute(f"{_SELECT} WHERE {scope}", args).fetchall()
        rows += conn.execute(
            "SELECT key, NULL, 0, status, archived FROM runs WHERE "
            f"NOT EXISTS (SELECT 1 FROM checks c WHERE c.key = runs.key) AND {scope}",
            args,
        ).fetchall()
    else:  # the live runs, and the settled ones due for a check (none before meta's due_from)
        rows = conn.execute(f"{_SELECT} WHERE settled = 0 AND {scope}", args).fetchall()
        cutoff = _cutoff(catalog, now)
        bound = conn.execute("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'due_from'").fetchone()
        if bound is None or bound[0] < cutoff:
            rows += conn.execute(
                f"{_SELECT} WHERE settled = 1 AND checked_at < ? AND {scope}", (cutoff,) + args
            ).fetchall()
    running = dict(
        conn.execute(
            "SELECT key, record FROM runs WHERE key IN "
            f"(SELECT key FROM checks WHERE settled = 0 AND status = 'running' AND {scope})",
            args,
        )
    )
    unread = f"SELECT key, archived FROM unread WHERE {scope}"
    return [row + (running.get(row[0]),) for row in rows] + [
        (key, None, 0, None, archived, None) for key, archived in conn.execute(unread, args)
    ]


def _cutoff(catalog: "Catalog", now: float) -> float:
    """A settled run whose stored check time is before this is due for a check."""
    return now - catalog.recheck_s


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
    updates: List[Tuple[float, str]] = []  # runs settled now: (check time stored, key)
    swept = False  # settled runs were checked (their rows are written by one UPDATE)
    for key, sig, settled, status, archived, text in _rows(catalog, scope, args, verify, now):
        if key in skip:
            continue
        swept = swept or bool(settled)
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
        if now_settled and not settled:
            updates.append((stamp(key, now, catalog.recheck_s), key))
    fresh = read_runs(reread, catalog.workers, progress)
    sweep = (scope, args, verify) if swept else None
    if (reread or updates or swept) and not _write_live(catalog, reread, fresh, updates, sweep, now):
        return None
    return {run_key(layout): rec for layout, (_, _, rec) in zip(reread, fresh) if rec.problems}


def _write_live(
    catalog: "Catalog",
    reread: List[RunLayout],
    fresh: List[Tuple[str, int, RunRecord]],
    updates: List[Tuple[float, str]],
    sweep: Optional[Tuple[str, tuple, bool]],
    now: float,
) -> bool:
    """Store the checks (narrow ``checks`` rows) and the runs read again (their ``runs`` rows).

    ``sweep`` (scope, its arguments, verify) stamps every settled run the check looked at in one
    UPDATE of the ``checks`` rows, in their order: those in scope that are still due (all of
    them with verify). Rows another process wrote meanwhile are not due any more, and a run
    it marked changed (not settled) is left for the next query; the runs read again are
    stored after, with their new signature.
    """
    file = catalog.file
    if not file.begin():
        return False
    try:
        conn = file.conn
        # narrow rows only: a check that found nothing changed rewrites no runs row
        if sweep is not None:
            scope, args, verify = sweep
            due = "" if verify else "AND checked_at < ?"
            conn.execute(
                f"UPDATE checks SET checked_at = ? - ? * jitter WHERE settled = 1 {due} AND {scope}",
                (now, SPREAD * catalog.recheck_s) + (() if verify else (_cutoff(catalog, now),)) + args,
            )
        conn.executemany("UPDATE checks SET settled = 1, checked_at = ? WHERE key = ?", updates)
        now_ns = time.time_ns()
        for layout, (sig, newest, rec) in zip(reread, fresh):
            key = unread_row(layout)
            if rec.problems:  # never cached: it stays (or becomes) unread
                conn.execute("DELETE FROM runs WHERE key = ?", (key[0],))
                conn.execute("INSERT OR REPLACE INTO unread VALUES (?, ?, ?, ?)", key)
            else:
                conn.execute("DELETE FROM unread WHERE key = ?", (key[0],))
                put_runs(
                    conn, [encode(layout, rec, sig, is_settled(rec, newest, now_ns), now)], catalog.recheck_s
                )
        if sweep is not None or updates:  # check times moved: the exact bound again
            conn.execute(RESET_DUE)
        return file.commit(bool(reread))
    except BaseException:
        file.rollback()
        raise
