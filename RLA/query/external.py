"""Records of runs supplied from outside the tree (a store's catalog), checked and stored in the index.

A reader of an object store (:mod:`RLA.sync.catalog_read`) has, for each run, the text of
the few files the query reads (``run.json``, ``parameter.json``, ``backup.txt``, the
``archive_tester`` JSON) and the summary of its ``progress.csv``, but not the files on
disk. :func:`record_from_texts` builds the run's record with the query's own reader
(:func:`RLA.query.records.read_record`) over those texts (:class:`TextFiles`): the same
size caps, JSON depth limit, ``run.json`` field checks and hyper-parameter fallbacks as a
run read from its folder, problems recorded, never raised.

:func:`store_records` puts such records into the index of a data root in one transaction,
with the signature of the run's files as they are on disk now (usually none): the query
trusts a stored record until those files change, then reads the run from disk as usual.
It also tags the index file (a random token in ``meta``) and returns the index's
generation, so :func:`lost_records` can tell, with one query of ``meta``, that nothing
replaced those records since (no rebuild, no re-read); only otherwise does it compare the
stored rows with what was stored.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from RLA.layout import INDEX_DB, RunLayout
from RLA.query.index_file import RUN_COLUMNS
from RLA.query.records import DiskFiles, RunRecord, read_record, signature_and_mtime
from RLA.safe_read import MAX_JSON_BYTES, UnreadableFileError, parse_json

#: ``meta`` key of the token of the index file the records went into.
TOKEN_KEY = "external_token"
#: Where a ``runs`` row holds the record (see :data:`RLA.query.index_file.RUN_COLUMNS`).
RECORD = RUN_COLUMNS.index("record")


class TextFiles(DiskFiles):
    """A run's small files as bytes (``{path: data}``) and its ``progress.csv`` summary.

    Args:
        texts: file path (as :func:`os.fspath` gives it) → its bytes; absent paths do not exist.
        summary: ``{"n_rows", "time_step", "metrics"}`` of ``progress.csv`` (``None``: no file).
    """

    def __init__(self, texts: Mapping[str, bytes], summary: Optional[Mapping[str, Any]]) -> None:
        self.texts = dict(texts)
        self.summary = summary

    def data(self, path: Path, max_bytes: int) -> bytes:
        data = self.texts.get(os.fspath(path))
        if data is None:
            raise FileNotFoundError(path)
        if len(data) > max_bytes:
            raise UnreadableFileError(path, f"{len(data)} bytes (at most {max_bytes} are read)")
        return data

    def json_object(self, path: Path) -> Dict[str, Any]:
        value = parse_json(path, self.data(path, MAX_JSON_BYTES))
        if not isinstance(value, dict):
            raise UnreadableFileError(path, f"expected a JSON object, found {type(value).__name__}")
        return value

    def present(self, path: Path) -> bool:
        return os.fspath(path) in self.texts

    def progress(self, path: Path, record: RunRecord) -> None:
        if self.summary is not None:
            record.n_rows = int(self.summary["n_rows"])
            record.time_step = self.summary["time_step"]
            record.metrics = {str(k): list(v) for k, v in self.summary["metrics"].items()}


def record_from_texts(
    layout: RunLayout, texts: Mapping[str, bytes], summary: Optional[Mapping[str, Any]]
) -> RunRecord:
    """The record of ``layout`` read from ``texts`` (see :class:`TextFiles`), as a query stores it."""
    return read_record(layout, "", full_info=False, files=TextFiles(texts, summary))


@dataclass
class Stored:
    """What :func:`store_records` stored: the index's token and generation, and per run key
    ``[signature, digest of the stored record]``."""

    token: str
    generation: int
    runs: Dict[str, List[str]]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass
class Encoded:
    """Index rows of runs read from outside, and per run key ``[signature, record digest]``."""

    rows: List[tuple]
    held: Dict[str, List[str]]

    def __add__(self, other: "Encoded") -> "Encoded":
        return Encoded(self.rows + other.rows, {**self.held, **other.held})


def encode_records(runs: Sequence[Tuple[RunLayout, RunRecord]]) -> Encoded:
    """The index rows of ``(layout, record)`` (records without problems), with the signature of
    each run's files as they are on disk now; stored settled (see :func:`store_records`)."""
    from RLA.query.stored import encode

    now = time.time()
    out = Encoded([], {})
    roots: Dict[Tuple[Path, bool], str] = {}
    for layout, record in runs:
        root = roots.setdefault((layout.data_root, layout.archived), os.fspath(layout.type_root("log")))
        sig, _newest = signature_and_mtime(layout, root)
        record.signature = sig
        row = encode(layout, record, sig, True, now)
        out.rows.append(row)
        out.held[row[0]] = [sig, _digest(row[RECORD])]
    return out


def store_records(
    data_root: os.PathLike, runs: Sequence[Tuple[RunLayout, RunRecord]], unread: Sequence[RunLayout] = ()
) -> Optional[Stored]:
    """Store ``(layout, record)`` of runs read from outside (records without problems) in the
    index of ``data_root``, in one transaction; the runs of ``unread`` (damaged: their files
    are on disk) lose any stored record and are read from disk by every query, as locally.

    They are stored settled: their files in ``data_root`` change only through the caller,
    which stores them again, or tells the index (:func:`RLA.query.catalog.mark_changed`)
    when it writes their files; a query therefore does not ``stat`` them but at the
    periodic re-check (:mod:`RLA.query.warm`).

    Returns:
        what was stored, or ``None`` when the index cannot be written now (locked, in memory).
    """
    return store_encoded(data_root, encode_records(runs), unread)


def store_encoded(
    data_root: os.PathLike, encoded: Encoded, unread: Sequence[RunLayout] = ()
) -> Optional[Stored]:
    """:func:`store_records` of rows made by :func:`encode_records` (its folders must exist by now)."""
    from RLA.query.catalog import Catalog
    from RLA.query.stored import put_runs, unread_row

    with Catalog(data_root) as index:
        if index.in_memory or not index.file.begin():
            return None
        try:
            conn = index.conn
            put_runs(conn, encoded.rows)  # the runs' rows, and their checks rows (settled, time)
            conn.executemany("DELETE FROM unread WHERE key = ?", [(key,) for key in encoded.held])
            damaged = [unread_row(layout) for layout in unread]
            conn.executemany("DELETE FROM runs WHERE key = ?", [row[:1] for row in damaged])
            conn.executemany("INSERT OR REPLACE INTO unread VALUES (?, ?, ?, ?)", damaged)
            token = _token(conn)
        except BaseException:
            index.file.rollback()
            raise
        if not index.file.commit(bool(encoded.rows or unread)):
            return None
        return Stored(token, index.file.generation(), encoded.held)


def _token(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (TOKEN_KEY,)).fetchone()
    if row is not None:
        return str(row[0])
    token = secrets.token_hex(8)
    conn.execute("INSERT INTO meta VALUES (?, ?)", (TOKEN_KEY, token))
    return token


def _mark(conn: sqlite3.Connection) -> Tuple[Optional[str], int]:
    """``(token, generation)`` of an index file (no token: never written by :func:`store_records`)."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, 'generation')", (TOKEN_KEY,)))
    token = meta.get(TOKEN_KEY)
    return (None if token is None else str(token)), int(meta.get("generation") or 0)


def _held(conn: sqlite3.Connection, keys: List[str]) -> Dict[str, Tuple[str, str]]:
    rows: Dict[str, Tuple[str, str]] = {}
    for lo in range(0, len(keys), 500):
        chunk = keys[lo : lo + 500]
        sql = f"SELECT key, sig, record FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
        rows.update((key, (sig, text)) for key, sig, text in conn.execute(sql, chunk))
    return rows


def lost_records(
    data_root: os.PathLike, stored: Stored
) -> Optional[Tuple[List[str], Optional[Tuple[str, int]]]]:
    """The run keys of ``stored`` whose record the index no longer holds as stored.

    A record is lost when its row is gone (the index deleted, rebuilt, the run dropped) or
    holds another record read from the same files (the run re-read from its folder, where
    the curves are not). A row whose files changed on disk since (the curves fetched) is
    the query's to keep. When the index is the same file at the same generation, nothing
    is compared (one query of ``meta``).

    Returns:
        ``(lost keys, (token, generation) of the index now if they differ from ``stored``'s)``,
        or ``None`` when the index cannot be read now.
    """
    path = Path(data_root) / INDEX_DB
    if not stored.runs:
        return [], None
    if not path.is_file():
        return sorted(stored.runs), None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            token, generation = _mark(conn)
            if token == stored.token and generation == stored.generation:
                return [], None
            rows = _held(conn, sorted(stored.runs))
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    lost = [
        key
        for key, (sig, digest) in sorted(stored.runs.items())
        if key not in rows or (rows[key][0] == sig and _digest(rows[key][1]) != digest)
    ]
    return lost, (None if token is None else (token, generation))
