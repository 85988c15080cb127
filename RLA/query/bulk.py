"""Reading many runs at once (a first build, a big copy): worker processes, rows written in batches.

The runs are read (``stat``, ``run.json``, ``progress.csv``) and encoded into index rows in
worker processes, a chunk at a time; the parent only writes each chunk's rows into SQLite in
its own transaction as it arrives. Memory stays bounded by a few chunks whatever the number of
runs, and a build stopped half-way keeps what it wrote: rows are only a cache of the tree, and
the next query reads just the runs still missing (the folder listings are written last, see
:func:`RLA.query.refresh.refresh`).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from RLA.layout import LOG, RunLayout, type_root
from RLA.query.records import RunRecord, read_record, signature_and_mtime
from RLA.query.stored import encode, put_runs, unread_row
from RLA.query.tree import run_key
from RLA.query.warm import is_settled

if TYPE_CHECKING:
    from RLA.query.catalog import Catalog

#: Runs per worker task (and per write transaction).
CHUNK = 500
#: ``(rows for runs, rows for unread, {key: damaged record})`` of one chunk.
Encoded = Tuple[List[tuple], List[tuple], Dict[str, RunRecord]]


def encode_chunk(job: Tuple[List[RunLayout], float]) -> Encoded:
    """Read and encode one chunk of runs (in a worker process)."""
    layouts, now = job
    rows: List[tuple] = []
    unread: List[tuple] = []
    damaged: Dict[str, RunRecord] = {}
    roots: Dict[Any, str] = {}
    for layout in layouts:
        root = roots.get((layout.data_root, layout.archived))
        if root is None:
            root = roots[layout.data_root, layout.archived] = os.fspath(
                type_root(layout.data_root, LOG, layout.archived)
            )
        sig, newest = signature_and_mtime(layout, root)
        record = read_record(layout, sig, full_info=False)
        if record.problems:
            unread.append(unread_row(layout))
            damaged[run_key(layout)] = record
        else:
            rows.append(encode(layout, record, sig, is_settled(record, newest, time.time_ns()), now))
    return rows, unread, damaged


def write_runs(
    catalog: "Catalog", layouts: Sequence[RunLayout], bar: Optional[Any], now: float
) -> Optional[Dict[str, RunRecord]]:
    """Read ``layouts`` in worker processes and store them, one transaction per chunk.

    Args:
        bar: a progress bar (``update(n)``) or None.

    Returns:
        the damaged runs (``{key: record}``, stored as unread), or None when the file
        could not be written (locked past the busy timeout): the caller falls back.
    """
    jobs = [(list(layouts[lo : lo + CHUNK]), now) for lo in range(0, len(layouts), CHUNK)]
    workers = min(catalog.workers, os.cpu_count() or 1)
    pool = ProcessPoolExecutor(workers) if workers > 1 and len(jobs) > 1 else None
    try:
        results: Iterable[Encoded] = pool.map(encode_chunk, jobs) if pool else map(encode_chunk, jobs)
        damaged: Dict[str, RunRecord] = {}
        for rows, unread, bad in results:
            if not _store(catalog, rows, unread):
                return None
            damaged.update(bad)
            if bar is not None and hasattr(bar, "update"):
                bar.update(len(rows) + len(unread))
        return damaged
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _store(catalog: "Catalog", rows: List[tuple], unread: List[tuple]) -> bool:
    """One chunk's rows in one transaction; False when the file cannot be written now."""
    file = catalog.file
    if not file.begin():
        return False
    try:
        put_runs(file.conn, rows, catalog.recheck_s)
        file.conn.executemany("INSERT OR REPLACE INTO unread VALUES (?, ?, ?, ?)", unread)
        return file.commit(True)
    except BaseException:
        file.rollback()
        raise
