"""Put the runs of catalog entries into a store's local cache: their folders, and their records in the index.

A run read from the catalog does not need its files on local disk to be listed: its record
is built by the query's own reader from the texts the entry carries
(:func:`RLA.query.external.record_from_texts`: the same size caps, JSON checks and
hyper-parameter fallbacks as a run read from its folder), with the entry's summary of
``progress.csv``, and all records are stored in the local index in one transaction
(:func:`RLA.query.external.store_records`). The cache gets only the run's ``log`` and
``code`` folders (the query finds runs by their folders; ``rla list`` warns about runs
without them), no file. Curves, logs and the small files themselves come with the first
command that reads them (``files=True``), and the query then reads the run from disk.

Runs the query must read from files get them written instead
(:func:`RLA.sync.catalog_files.materialize`): an entry that names files to download from
the store (too big to carry, or not text), a run whose texts the query finds damaged (it
is then read and reported from disk, as locally), and a run without ``log`` or ``code``.

A big cold read (thousands of runs) is shared by worker processes, one part of the entries
each (:func:`_read_parts`, as the query's own first build, :mod:`RLA.query.bulk`): each
builds, checks and encodes its runs' records and makes their folders; this process stores
all the rows in one transaction.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import queue
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from RLA.layout import ARCHIVE_TESTER, CODE, DATA_TYPES, LOG, RunLayout, type_root
from RLA.sync.catalog_files import Folders, layout_of, materialize
from RLA.sync.store_catalog import PROGRESS_KEY, Entry

#: ``(layout, record)`` of a run to store.
Ready = Tuple[RunLayout, Any]
#: Fewest runs per process when a cold read is shared by worker processes.
PARALLEL_MIN = 400
#: Most processes (this one included) reading the runs of a cold read.
MAX_PARTS = 4


class _Places:
    """Text paths in the cache (pathlib per file costs more than the rest of a run's work).

    They are the paths :class:`RunLayout` gives (``<root>[/arc]/<type>/<relative>[.json]``),
    built from a place checked when its entry was parsed.
    """

    def __init__(self, root: Path) -> None:
        self.bases = {(t, a): os.fspath(type_root(root, t, a)) for t in DATA_TYPES for a in (False, True)}

    def folder(self, entry: Entry, data_type: str) -> str:
        return f"{self.bases[data_type, entry.archived]}/{entry.relative}"

    def file(self, entry: Entry, key: str) -> str:
        data_type, _, inner = key.partition("/")
        if data_type == ARCHIVE_TESTER:
            return f"{self.bases[data_type, entry.archived]}/{entry.relative}.json"
        return f"{self.folder(entry, data_type)}/{inner}"


def _texts(places: _Places, entry: Entry) -> Dict[str, bytes]:
    """The entry's files at their place in the cache (the paths the query's reader asks for)."""
    return {places.file(entry, key): text.encode("utf-8") for key, (text, _m) in entry.texts.items()}


def _types(entry: Entry) -> List[str]:
    """The run's folders the cache needs (``log`` and ``code`` when the entry has a file there)."""
    keys = [*entry.texts, *entry.fetch] + ([PROGRESS_KEY] if entry.progress is not None else [])
    return [t for t in (LOG, CODE) if any(k.partition("/")[0] == t for k in keys)]


def _from_files(transport: Any, remote_root: str, folders: Folders, entry: Entry, limit: int) -> Ready:
    """Write the run's files into the cache and read its record from them (with the entry's curves)."""
    from RLA.query.records import read_record, signature_and_mtime

    layout = materialize(transport, remote_root, folders, entry, limit)
    sig, _newest = signature_and_mtime(layout)
    record = read_record(layout, sig, full_info=False)
    if entry.progress is not None and PROGRESS_KEY not in entry.fetch:
        record.metrics = {k: list(v) for k, v in entry.progress["metrics"].items()}
        record.time_step = entry.progress["time_step"]
        record.n_rows = entry.progress["n_rows"]
    return layout, record


class _FolderMaker:
    """Creates the fast runs' folders in a thread while the records are built and encoded:
    ``mkdir`` is the kernel's work and releases the GIL (two folders per run)."""

    def __init__(self, folders: Folders) -> None:
        self.folders = folders
        self.todo: "queue.Queue[Optional[str]]" = queue.Queue()
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rla-catalog-folders")
        self.done = self.pool.submit(self._run)

    def _run(self) -> None:
        while True:
            path = self.todo.get()
            if path is None:
                return
            self.folders.ensure(path)

    def finish(self) -> None:
        """Wait until every folder is made (raises what the thread raised, e.g. a planted link)."""
        self.todo.put(None)
        try:
            self.done.result()
        finally:
            self.pool.shutdown()


def _seed_part(job: Tuple[Path, Sequence[Entry]]) -> Tuple[Any, List[int]]:
    """Build the records of one part of the entries, make their folders and encode them (in
    this process or a worker: every folder checked by :class:`Folders`, as in one process).

    Returns:
        ``(Encoded rows of the fast runs, positions in the part of the runs to read from files)``.
    """
    from RLA.query.external import encode_records, record_from_texts

    cache, entries = job
    folders, places = Folders(cache), _Places(cache)
    maker = _FolderMaker(folders)
    ready: List[Ready] = []
    slow: List[int] = []
    try:
        for position, entry in enumerate(entries):
            types = _types(entry)
            layout = layout_of(cache, entry)
            record = record_from_texts(layout, _texts(places, entry), entry.progress)
            if entry.fetch or record.problems or not types:
                slow.append(position)  # after the folders: one writer of folders at a time
                continue
            for data_type in types:
                maker.todo.put(places.folder(entry, data_type))
            ready.append((layout, record))
    finally:
        maker.finish()
    # after the folders: a stat in a folder being written waits for it
    return encode_records(ready), slow


def _parts(entries: Sequence[Entry]) -> List[Sequence[Entry]]:
    """``entries`` split for the processes that read them: one part per CPU (at most
    :data:`MAX_PARTS`), each of at least :data:`PARALLEL_MIN` runs (a worker's start costs more)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    if multiprocessing.current_process().daemon:
        cpus = 1  # a pool's worker may not start processes
    count = max(1, min(cpus, MAX_PARTS, len(entries) // PARALLEL_MIN))
    size = -(-len(entries) // count)
    return [entries[lo : lo + size] for lo in range(0, len(entries), size)] or [entries]


def _read_parts(cache: Path, entries: Sequence[Entry]) -> Tuple[Any, List[Entry]]:
    """:func:`_seed_part` of every part: the first in this process, the others in worker
    processes at the same time; returns all the rows and the entries to read from files."""
    parts = _parts(entries)
    pool = concurrent.futures.ProcessPoolExecutor(len(parts) - 1) if len(parts) > 1 else None
    try:
        futures = [pool.submit(_seed_part, (cache, part)) for part in parts[1:]] if pool else []
        results = [_seed_part((cache, parts[0])), *(future.result() for future in futures)]
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    encoded = results[0][0]
    for rows, _slow in results[1:]:
        encoded = encoded + rows
    return encoded, [part[i] for part, (_rows, slow) in zip(parts, results) for i in slow]


def seed(
    transport: Any, remote_root: str, cache: Path, entries: Sequence[Entry], limit: int
) -> Optional[Tuple[Any, List[str]]]:
    """Store the records of the runs of ``entries`` in the index of ``cache`` (see the module's doc).

    Returns:
        ``(Stored, keys of the runs whose files were written)``, or ``None`` when the index
        cannot be written now (the store is then listed instead).
    """
    from RLA.query.external import encode_records, store_encoded

    encoded, slow = _read_parts(cache, entries)
    read = [_from_files(transport, remote_root, Folders(cache), entry, limit) for entry in slow]
    encoded = encoded + encode_records([(layout, record) for layout, record in read if not record.problems])
    damaged = [layout for layout, record in read if record.problems]
    stored = store_encoded(cache, encoded, damaged)
    return None if stored is None else (stored, [entry.key for entry in slow])
