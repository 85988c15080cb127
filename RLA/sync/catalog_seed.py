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
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from RLA.layout import ARCHIVE_TESTER, CODE, DATA_TYPES, LOG, RunLayout, type_root
from RLA.sync.catalog_files import Folders, layout_of, materialize
from RLA.sync.store_catalog import PROGRESS_KEY, Entry

#: ``(layout, record)`` of a run to store.
Ready = Tuple[RunLayout, Any]


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


def seed(
    transport: Any, remote_root: str, cache: Path, entries: Sequence[Entry], limit: int
) -> Optional[Tuple[Any, List[str]]]:
    """Store the records of the runs of ``entries`` in the index of ``cache`` (see the module's doc).

    Returns:
        ``(Stored, keys of the runs whose files were written)``, or ``None`` when the index
        cannot be written now (the store is then listed instead).
    """
    from RLA.query.external import encode_records, record_from_texts, store_encoded

    folders, places = Folders(cache), _Places(cache)
    maker = _FolderMaker(folders)
    ready: List[Ready] = []
    slow: List[Entry] = []
    try:
        for entry in entries:
            types = _types(entry)
            layout = layout_of(cache, entry)
            record = record_from_texts(layout, _texts(places, entry), entry.progress)
            if entry.fetch or record.problems or not types:
                slow.append(entry)  # after the thread: one writer of folders at a time
                continue
            for data_type in types:
                maker.todo.put(places.folder(entry, data_type))
            ready.append((layout, record))
    finally:
        maker.finish()
    read = [_from_files(transport, remote_root, folders, entry, limit) for entry in slow]
    # after the folders: a stat in a folder being written waits for it
    encoded = encode_records([*ready, *((layout, record) for layout, record in read if not record.problems)])
    damaged = [layout for layout, record in read if record.problems]
    stored = store_encoded(cache, encoded, damaged)
    return None if stored is None else (stored, [entry.key for entry in slow])
