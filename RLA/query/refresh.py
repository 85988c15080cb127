"""Bring the index in step with the tree, doing only the work that can have changed.

One refresh (every query does one, for its scope):

1. **Structure.** :func:`RLA.query.tree.walk` ``stat``\\ s every folder down to the day
   folders and lists those whose mtime changed, against the listings stored in the index
   (so a new process trusts what an earlier one listed). For each day whose folders
   changed, the runs stored for that day are set to the union of the listings: new runs
   are read (in parallel, with a progress bar), vanished ones dropped. Listings and runs
   are written in one transaction; a day another process re-listed meanwhile is stored
   untrusted, so the next query lists it again.
2. **Live runs.** Runs that are not settled (see :func:`is_settled`), runs without a
   stored record (damaged, never cached) and settled runs due for the periodic re-check
   (at most ``recheck_s`` after their last check; or all, with ``verify``) get their files
   ``stat``\\ ed, and are read again when the signature changed (see :mod:`RLA.query.live`).
   Settled runs that are not due are not touched.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from RLA.layout import RunLayout
from RLA.query.live import check_live
from RLA.query.records import RunRecord, read_record, signature_and_mtime
from RLA.query.stored import encode, put_runs, unread_row
from RLA.query.tree import Listing, gone_dirs, layout_of, run_key, walk
from RLA.query.warm import is_settled

if TYPE_CHECKING:
    from RLA.query.catalog import Catalog
    from RLA.query.index_file import IndexFile

ProgressFn = Callable[[Iterable[RunLayout], int], Iterable[RunLayout]]
#: Below this many runs to read, threads; above, worker processes (the reading is CPU-bound).
PROCESS_THRESHOLD = 2000
_CHUNK = 200
#: Stored statuses whose runs are settled once their files are quiet (no record needed).
_QUIET_SETTLES = ("finished", "crashed", "killed", "unknown")
#: ``(signature, newest mtime, record)`` of a run read from disk.
Read = Tuple[str, int, RunRecord]


def _read_chunk(layouts: List[RunLayout]) -> List[Read]:
    out = []
    for layout in layouts:
        sig, newest = signature_and_mtime(layout)
        out.append((sig, newest, read_record(layout, sig, full_info=False)))
    return out


def read_runs(layouts: Sequence[RunLayout], workers: int, progress: Optional[ProgressFn]) -> List[Read]:
    """Read runs from disk in parallel, in order; ``progress`` wraps the chunks' layouts."""
    chunks = [list(layouts[lo : lo + _CHUNK]) for lo in range(0, len(layouts), _CHUNK)]
    bar = progress(iter(()), len(layouts)) if progress is not None and layouts else None
    out: List[Read] = []
    if len(layouts) < 16 or workers == 1:
        parts: Iterable[List[Read]] = map(_read_chunk, chunks)
    elif len(layouts) >= PROCESS_THRESHOLD and (os.cpu_count() or 1) > 1:
        pool = ProcessPoolExecutor(min(workers, os.cpu_count() or 1))
        parts = pool.map(_read_chunk, chunks)
    else:
        pool = ThreadPoolExecutor(workers)  # type: ignore[assignment]
        parts = pool.map(_read_chunk, chunks)
    try:
        for part in parts:
            out.extend(part)
            if bar is not None and hasattr(bar, "update"):
                bar.update(len(part))
    finally:
        if len(layouts) >= 16 and workers != 1:
            pool.shutdown()
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return out


def _stored_dirs(catalog: "Catalog", task: Optional[str], flags: List[bool]) -> Dict[str, Listing]:
    """Stored listings in scope (day listings without their names, loaded when needed)."""
    from RLA.layout import DATA_TYPES
    from RLA.query.tree import store_path

    prefixes = [store_path(t, flag, task or "") for flag in flags for t in DATA_TYPES]
    stored: Dict[str, Listing] = {}
    for prefix in prefixes:
        rows = catalog.conn.execute(
            "SELECT path, mtime_ns, trusted, day, CASE WHEN day IS NULL THEN names END FROM dirs "
            "WHERE path = ? OR substr(path, 1, ?) = ?",
            (prefix, len(prefix) + 1, prefix + "/"),
        )
        for path, mtime, trusted, day, names in rows:
            stored[path] = Listing(
                mtime, bool(trusted), json.loads(names) if names is not None else None, day
            )
    return stored


def _day_members(catalog: "Catalog", days: List[str], listings: Dict[str, Listing]) -> Dict[str, Set[str]]:
    """The run keys each day should hold: the union of its folders' listings."""
    missing = [path for path, listing in listings.items() if listing.day in days and listing.names is None]
    for path, names in catalog.file.in_chunks("SELECT path, names FROM dirs WHERE path IN ({})", missing):
        listings[path].names = json.loads(names)
    members: Dict[str, Set[str]] = {day: set() for day in days}
    for listing in listings.values():
        if listing.day in members:
            members[listing.day].update(f"{listing.day}/{name}" for name in listing.names or [])
    return members


def refresh(
    catalog: "Catalog", task: Optional[str], flags: List[bool], verify: bool, progress: Optional[ProgressFn]
) -> Dict[str, RunRecord]:
    """Bring the scope up to date (see the module docstring).

    Returns:
        ``{key: record}`` of the runs in scope that could not be read (damaged): they are
        never stored, and are reported by the caller.
    """
    stored = _stored_dirs(catalog, task, flags)
    found = walk(catalog.data_root, stored, task, flags, full=verify)
    catalog.undecodable = sorted(found.undecodable)
    gone = gone_dirs(stored, found.listings, task, flags)
    days: List[str] = sorted(found.days | {day for day in (stored[path].day for path in gone) if day})
    members = _day_members(catalog, days, found.listings)
    known = {
        key
        for table in ("runs", "unread")
        for (key,) in catalog.file.in_chunks(f"SELECT key FROM {table} WHERE day IN ({{}})", days)
    }
    wanted = set().union(*members.values()) if members else set()
    added = sorted(wanted - known)
    removed = sorted(known - wanted)
    layouts = [layout_of(catalog.data_root, key) for key in added]
    now = time.time()
    if len(layouts) >= PROCESS_THRESHOLD and (os.cpu_count() or 1) > 1:
        # A first build (or a big copy): read in worker processes, stored chunk by chunk
        # (bounded memory); the listings below are written once the runs are in.
        streamed = _bulk_write(catalog, layouts, progress, now)
        read: List[Tuple[RunLayout, Read]] = []
    else:
        streamed = {}
        read = list(zip(layouts, read_runs(layouts, catalog.workers, progress)))
    if streamed is None or (
        (found.relisted or gone or added or removed)
        and not _write_structure(
            catalog, stored, found.listings, found.relisted, gone, days, removed, read, now, bool(added)
        )
    ):
        # The file stayed locked past the busy timeout: answer from a private in-memory
        # index built from the tree (correct, only slower), never from rows known stale.
        catalog.file.fall_back_to_memory()
        return refresh(catalog, task, flags, verify, progress)
    damaged = {run_key(layout): rec for layout, (_, _, rec) in read if rec.problems}
    damaged.update(streamed)
    live = check_live(catalog, task, flags, verify, set(added), progress, now)
    if live is None:
        catalog.file.fall_back_to_memory()
        return refresh(catalog, task, flags, verify, progress)
    damaged.update(live)
    return damaged


def _write_structure(
    catalog: "Catalog",
    stored: Dict[str, Listing],
    listings: Dict[str, Listing],
    relisted: Set[str],
    gone: List[str],
    days: List[str],
    removed: List[str],
    added: List[Tuple[RunLayout, Read]],
    now: float,
    new_runs: bool,
) -> bool:
    file = catalog.file
    if not file.begin():
        return False
    try:
        conn = file.conn
        _store_listings(file, stored, listings, relisted, gone, days)
        conn.executemany("DELETE FROM runs WHERE key = ?", [(key,) for key in removed])
        conn.executemany("DELETE FROM unread WHERE key = ?", [(key,) for key in removed])
        good = [(layout, read) for layout, read in added if not read[2].problems]
        put_runs(
            conn,
            [
                encode(layout, rec, sig, is_settled(rec, newest, time.time_ns()), now)
                for layout, (sig, newest, rec) in good
            ],
            catalog.recheck_s,
        )
        conn.executemany(
            "INSERT OR REPLACE INTO unread VALUES (?, ?, ?, ?)",
            [unread_row(layout) for layout, read in added if read[2].problems],
        )
        return file.commit(bool(removed or new_runs))
    except BaseException:
        file.rollback()
        raise


def _store_listings(
    file: "IndexFile",
    stored: Dict[str, Listing],
    listings: Dict[str, Listing],
    relisted: Set[str],
    gone: List[str],
    days: List[str],
) -> None:
    """Write the folder listings (inside the caller's transaction)."""
    # Another process may have re-listed one of these days since we read the store:
    # our listings are then stored untrusted, so the next query lists the day again.
    raced = {
        day
        for path, mtime, day in file.in_chunks("SELECT path, mtime_ns, day FROM dirs WHERE day IN ({})", days)
        if path not in stored or stored[path].mtime_ns != mtime
    }
    conn = file.conn
    conn.executemany(
        "INSERT OR REPLACE INTO dirs VALUES (?, ?, ?, ?, ?)",
        [
            (
                path,
                listings[path].mtime_ns,
                int(listings[path].trusted and listings[path].day not in raced),
                listings[path].day,
                json.dumps(listings[path].names),
            )
            for path in relisted
        ],
    )
    conn.executemany("DELETE FROM dirs WHERE path = ?", [(path,) for path in gone])
    if raced:
        conn.executemany("UPDATE dirs SET trusted = 0 WHERE day = ?", [(day,) for day in raced])


def _bulk_write(
    catalog: "Catalog", layouts: List[RunLayout], progress: Optional[ProgressFn], now: float
) -> Optional[Dict[str, RunRecord]]:
    """:func:`RLA.query.bulk.write_runs` with the progress bar; None when the file is locked."""
    from RLA.query.bulk import write_runs

    bar = progress(iter(()), len(layouts)) if progress is not None else None
    try:
        return write_runs(catalog, layouts, bar, now)
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
