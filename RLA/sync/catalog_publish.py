"""Publish the store-side catalog after a push (object stores only).

:meth:`Publisher.prepare` runs before the push: it ``stat``\\ s the few files of each
selected run that an entry is made of and builds entries only for the runs whose files
changed since the catalog last got them (read *before* the upload, so the store always
holds at least what an entry says). :meth:`Publisher.publish` runs after every run was
pushed: one PUT of an ``entries`` object, a compaction when such objects pile up, then the
``generation`` object (last), and only then the local record of what was published, so a
push killed at any point publishes again next time. A push with nothing new sends nothing.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from RLA.fs import atomic_write_json, read_json
from RLA.layout import RunLayout
from RLA.sync.catalog_io import CatalogObjects, kinds
from RLA.sync.manifest import MANIFEST_DIR
from RLA.sync.store_catalog import (
    ENTRIES,
    MAX_TEXT,
    PROGRESS_KEY,
    SHARDS,
    SMALL_KEYS,
    Entry,
    dump_object,
    newest,
    parse_generation,
)

#: A compaction folds the objects when more than this many ``entries`` objects are listed.
COMPACT_AT = 16
#: Runs per compacted shard (a cold reader downloads the shards in parallel).
SHARD_RUNS = 500
STATE_NAME = ".catalog.json"


def _point(name: str) -> None:
    """Deterministic fault point ``name`` (tests interrupt a publication there)."""
    from RLA.replay_buffer.snapshot import faults  # imported by object-store pushes only

    faults.point(name)


def _local_path(run: RunLayout, key: str) -> Path:
    data_type, _, inner = key.partition("/")
    return run.path(data_type).joinpath(*inner.split("/")) if inner else run.path(data_type)


def _regular(path: Path) -> Optional[os.stat_result]:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _keys(data_types: Sequence[str]) -> List[str]:
    return [k for k in (*SMALL_KEYS, PROGRESS_KEY) if k.partition("/")[0] in data_types]


def run_signature(run: RunLayout, data_types: Sequence[str]) -> str:
    """The stats of the files an entry of ``run`` is made of (a change means "publish again")."""
    stats = []
    for key in _keys(data_types):
        st = _regular(_local_path(run, key))
        stats.append(f"{st.st_mtime_ns}:{st.st_size}" if st else "-")
    return "|".join(stats)


def build_entry(run: RunLayout, data_types: Sequence[str], max_size: Optional[int] = None) -> Entry:
    """The entry of ``run`` read from its local files (links and special files are not read)."""
    entry = Entry(run.relative, time.time(), archived=run.archived)
    for key in _keys(data_types):
        path = _local_path(run, key)
        st = _regular(path)
        if st is None or (max_size and st.st_size > max_size):
            continue  # not on the store either
        if key == PROGRESS_KEY:
            from RLA.query.records import RunRecord, summarize_progress  # only when a run changed

            record = RunRecord(relative=run.relative)
            summarize_progress(path, record)
            entry.progress_mtime = st.st_mtime
            if record.problems:  # the reader reads the file itself and reports it as the query does
                entry.fetch.append(key)
            else:
                progress = {"n_rows": record.n_rows, "time_step": record.time_step, "metrics": record.metrics}
                entry.progress = progress
            continue
        try:
            text = path.read_bytes().decode("utf-8") if st.st_size <= MAX_TEXT else None
        except (OSError, UnicodeDecodeError):
            text = None
        if text is None or len(text) > MAX_TEXT:
            entry.fetch.append(key)
        else:
            entry.texts[key] = (text, st.st_mtime)
    return entry


class Publisher:
    """The catalog entries one push publishes (see the module's doc).

    Args:
        data_root: the local database.
        target: the store's id (:func:`RLA.sync.manifest.target_id`).
        remote_root: the data root on the store.
        data_types: the synced data types.
        max_file_size: files over this size are not pushed (nor summarized).
    """

    def __init__(
        self,
        data_root: Path,
        target: str,
        remote_root: str,
        data_types: Sequence[str],
        max_file_size: Optional[int] = None,
    ) -> None:
        self.state_path = Path(data_root) / MANIFEST_DIR / target / STATE_NAME
        self.remote_root = remote_root
        self.data_types = list(data_types)
        self.max_file_size = max_file_size
        self.entries: List[Entry] = []
        self.signatures: Dict[str, str] = {}

    def _published(self) -> Dict[str, str]:
        try:
            raw = read_json(self.state_path)
        except (OSError, ValueError):
            return {}
        runs = raw.get("runs") if isinstance(raw, dict) else None
        return {str(k): str(v) for k, v in runs.items()} if isinstance(runs, dict) else {}

    def prepare(self, runs: Sequence[RunLayout]) -> int:
        """Build the entries of the runs changed since their last publication; returns how many."""
        published = self._published()
        for run in runs:
            sig = run_signature(run, self.data_types)
            key = ("arc:" if run.archived else "") + run.relative  # the index's key (Entry.key)
            if published.get(key) != sig:
                self.entries.append(build_entry(run, self.data_types, self.max_file_size))
                self.signatures[key] = sig
        return len(self.entries)

    def publish(self, transport: Any) -> None:
        """Publish the prepared entries on ``transport`` (an S3 transport), then record them."""
        if not self.entries:
            return
        objects = CatalogObjects(transport, self.remote_root)
        objects.put(ENTRIES, dump_object(self.entries))
        _point("sync.catalog:entries-published")
        listed = objects.listed()
        if len(kinds(listed, objects.base)[ENTRIES]) > COMPACT_AT:
            try:
                compact(objects, listed)
            except FileNotFoundError:
                pass  # another pusher compacted them meanwhile: its shards hold them
        objects.put_generation(self._complete(objects, transport))
        _point("sync.catalog:generation-published")
        published = self._published()
        published.update(self.signatures)
        atomic_write_json(self.state_path, {"version": 1, "runs": published}, durable=False)
        self.entries, self.signatures = [], {}

    def _complete(self, objects: CatalogObjects, transport: Any) -> bool:
        """Whether every run on the store has an entry (kept from the generation once true).

        A store that had runs before its first catalog (pushed by another tool), or whose
        first catalog raced with another pusher's, is listed once per push until every run
        it holds has an entry; readers list such a store instead of trusting the catalog.
        """
        current = objects.read_generation()
        if current is not None and parse_generation(current):
            return True
        from RLA.sync.store_mirror import list_store

        on_store = set(list_store(transport, self.remote_root, self.data_types, lambda _k, _w: None))
        catalogued = {e.key for e in self.entries}
        missing = on_store - catalogued
        if missing:
            try:
                for _obj, entries in objects.get_all(objects.listed()):
                    catalogued.update(e.key for e in entries)
            except FileNotFoundError:
                return False  # compacted meanwhile: checked again at the next push
        return not (on_store - catalogued)


def compact(objects: CatalogObjects, listed: List[Any]) -> Tuple[int, int]:
    """Fold the ``listed`` objects into new shards, then delete exactly them.

    Returns:
        ``(objects folded, shards written)``.
    """
    merged = newest([e for _obj, entries in objects.get_all(listed) for e in entries])
    runs = sorted(merged)
    chunks = [runs[lo : lo + SHARD_RUNS] for lo in range(0, len(runs), SHARD_RUNS)]
    for chunk in chunks:
        objects.put(SHARDS, dump_object([merged[rel] for rel in chunk]))
    _point("sync.catalog:shards-published")
    objects.delete(listed)
    return len(listed), len(chunks)


def for_push(syncer: Any, runs: Sequence[RunLayout], dry_run: bool) -> Optional[Publisher]:
    """The publisher of a push of ``syncer`` (``None`` unless it pushes to an object store)."""
    if dry_run or syncer.settings.file_transfer_protocol != "s3":
        return None
    publisher = Publisher(
        syncer.data_root, syncer.target, syncer.remote_root, syncer.data_types, syncer.max_file_size
    )
    return publisher if publisher.prepare(runs) else None
