"""Put the records of runs read from the store's catalog into the local query index.

A run brought into the cache from the catalog has its small files on local disk but not
its curves (``progress.csv`` stays on the store until a command needs it), so the query
could not compute its metrics by reading the folder. Its record is therefore built here,
the way the query builds it (:func:`RLA.query.records.read_record` on the cached files),
with the ``progress.csv`` summary of the catalog entry, and stored in the index with the
signature of the cached files: the query trusts it until those files change (a later
fetch of the curves, or a newer entry), then reads the run from disk as usual.

This uses the query's public parts (``read_record``, ``signature_and_mtime``, ``encode``,
``INSERT_RUN``, ``is_settled``) through one function, so a hook owned by
:mod:`RLA.query` can replace it in one place.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.layout import RunLayout
from RLA.sync.store_catalog import PROGRESS_KEY, Entry


def seeded_record(layout: RunLayout, entry: Entry) -> Tuple[str, int, Any]:
    """``(signature, newest mtime, record)`` of a cached run with the entry's curve summary."""
    from RLA.query.records import read_record, signature_and_mtime

    sig, newest = signature_and_mtime(layout)
    record = read_record(layout, sig, full_info=False)
    if entry.progress is not None and PROGRESS_KEY not in entry.fetch:
        record.metrics = {k: list(v) for k, v in entry.progress["metrics"].items()}
        record.time_step = entry.progress["time_step"]
        record.n_rows = entry.progress["n_rows"]
    return sig, newest, record


def seed(cache: Path, runs: List[Tuple[RunLayout, Entry]]) -> Optional[Dict[str, int]]:
    """Store the records of ``runs`` in the index of ``cache``.

    Runs whose record has problems are not stored (the query reads and reports them).

    Returns:
        ``{key: rows}`` of the stored runs, or ``None`` if the index cannot be written now.
    """
    from RLA.query.catalog import Catalog
    from RLA.query.index_file import INSERT_RUN
    from RLA.query.stored import encode
    from RLA.query.warm import is_settled

    now, now_ns = time.time(), time.time_ns()
    rows, stored = [], {}
    for layout, entry in runs:
        sig, newest, record = seeded_record(layout, entry)
        if not record.problems:
            rows.append(encode(layout, record, sig, is_settled(record, newest, now_ns), now))
            stored[run_key(layout)] = record.n_rows
    if not rows:
        return stored
    with Catalog(cache) as index:
        if index.in_memory or not index.file.begin():
            return None
        try:
            index.conn.executemany(INSERT_RUN, rows)
            index.conn.executemany("DELETE FROM unread WHERE key = ?", [(k,) for k in stored])
        except BaseException:
            index.file.rollback()
            raise
        return stored if index.file.commit(True) else None


def stale(cache: Path, expected: Dict[str, int]) -> List[str]:
    """The run keys of ``expected`` (key → rows of its curves) that the index of ``cache`` lacks
    or holds with another row count (rebuilt from the cached files, where the curves are not)."""
    import sqlite3

    from RLA.layout import INDEX_DB

    path = cache / INDEX_DB
    if not expected:
        return []
    if not path.is_file():
        return sorted(expected)
    keys = sorted(expected)
    held: Dict[str, Any] = {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            for lo in range(0, len(keys), 500):
                chunk = keys[lo : lo + 500]
                sql = "SELECT key, json_extract(record, '$.n_rows') FROM runs WHERE key IN ({})"
                held.update(conn.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return keys
    return [key for key in keys if held.get(key) != expected[key]]


def run_key(layout: RunLayout) -> str:
    """The index's key of a run."""
    from RLA.query.stored import unread_row

    return unread_row(layout)[0]
