"""Bring a local cache up to date from the store's catalog instead of listing every file.

A refresh HEADs the catalog's ``generation`` object: when its ETag is the one the cache
last read, nothing changed on the store and the local index is used as it is (one
request). Otherwise the catalog objects are listed (a few keys), the new ones downloaded
in parallel, each run whose newest entry is newer than the cache's gets its small files
written into the cache and its record put into the local query index
(:mod:`RLA.sync.catalog_seed`), runs no longer catalogued leave the cache, and only then
the cache's record of what it read is saved. Curves and logs stay on the store.

A store without a catalog, or whose catalog does not list every run (see
:meth:`RLA.sync.catalog_publish.Publisher._complete`), is read by listing it
(:func:`refresh_from_catalog` returns ``None``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.errors import SyncError
from RLA.fs import atomic_file, atomic_write_json
from RLA.layout import RunLayout
from RLA.sync.base import RemoteFileError
from RLA.sync.catalog_io import CatalogObjects
from RLA.sync.catalog_seed import run_key, seed, stale
from RLA.sync.remote_names import local_destination
from RLA.sync.runfiles import key_path
from RLA.sync.store_catalog import (
    FETCH_KEYS,
    PROGRESS_KEY,
    SMALL_KEYS,
    Entry,
    newest,
    parse_entry,
    parse_generation,
)

STATE_FILE = ".rla_catalog.json"
#: The entries the cache applied (to put them in a rebuilt index again without the store).
ENTRIES_FILE = ".rla_catalog_entries.json"
#: Listings tried when objects vanish between a listing and their download (compactions).
ATTEMPTS = 3


@dataclass
class Applied:
    """What one catalog refresh did."""

    runs: List[str]
    written: List[str]
    present: Optional[List[str]]  # ``None``: nothing changed on the store (nothing to prune)


def _load(path: Path) -> Dict[str, Any]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            raw = json.load(handle)
        return raw if isinstance(raw, dict) and raw.get("version") == 1 else {}
    except (OSError, ValueError):
        return {}


def _mapping(state: Dict[str, Any], name: str) -> Dict[str, Any]:
    value = state.get(name)
    return value if isinstance(value, dict) else {}


def _layout(root: Path, relative: str) -> RunLayout:
    parts = relative.split("/")
    return RunLayout(root, "/".join(parts[:-4]), "/".join(parts[-4:-1]), parts[-1])


def _write(path: Path, data: bytes, mtime: Optional[float]) -> bool:
    """Replace ``path`` with ``data`` (skipped when it holds them already); set its time."""
    try:
        same = path.is_file() and not path.is_symlink() and path.read_bytes() == data
    except OSError:
        same = False
    if not same:
        with atomic_file(path, durable=False) as handle:
            handle.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime), follow_symlinks=False)
    return not same


def _fetch(transport: Any, remote_root: str, local: RunLayout, key: str, limit: int) -> None:
    """Download one file of a run the pusher could not summarize (damaged, or too big to carry)."""
    remote = RunLayout(Path(remote_root), local.task, local.date, local.name)
    path = local_destination(local, key)
    try:
        with atomic_file(path, durable=False) as handle:
            transport.read(key_path(remote, key), handle, 0, limit)
    except RemoteFileError:
        if path.is_file() and not path.is_symlink():
            path.unlink()  # gone from the store: gone from the cache


def materialize(transport: Any, remote_root: str, cache: Path, entry: Entry, limit: int) -> RunLayout:
    """Write the cached files of ``entry``'s run (every path checked); returns its local layout.

    Cached small files the entry no longer has are removed, and so is a cached
    ``progress.csv`` of a run that has none; a cached copy of curves the entry summarizes
    stays (the index takes the entry's summary; a command that reads the curves
    refreshes them).
    """
    local = _layout(cache, entry.relative)
    for key in SMALL_KEYS:
        path = local_destination(local, key)
        if key in entry.texts:
            text, mtime = entry.texts[key]
            _write(path, text.encode("utf-8"), mtime)
        elif key not in entry.fetch and path.is_file() and not path.is_symlink():
            path.unlink()
    progress = local_destination(local, PROGRESS_KEY)
    if entry.progress is None and PROGRESS_KEY not in entry.fetch and progress.is_file():
        progress.unlink()  # the run has no curves on the store (any cached copy is stale)
    for key in entry.fetch:
        _fetch(transport, remote_root, local, key, limit)
    return local


def _read_new(
    objects: CatalogObjects, known: Dict[str, Any]
) -> Tuple[List[str], Dict[str, Entry], Dict[str, Any]]:
    """List the catalog and download the objects not read before (again if one vanished).

    Returns:
        the runs of every listed object, the newest entry of each run in the new objects,
        and the listed objects' record (key → ``{"etag", "runs"}``).
    """
    for _attempt in range(ATTEMPTS):
        listed = objects.listed()
        new = [o for o in listed if (known.get(o.key) or {}).get("etag") != o.etag]
        try:
            got = objects.get_all(new)
        except FileNotFoundError:
            continue  # compacted between the listing and the download: list again
        record = {o.key: known[o.key] for o in listed if o not in new}
        record.update({o.key: {"etag": o.etag, "runs": [e.relative for e in es]} for o, es in got})
        present = sorted({rel for item in record.values() for rel in item["runs"]})
        return present, newest([e for _o, es in got for e in es]), record
    raise SyncError(
        "The store's catalog kept changing while it was read",
        expected="catalog objects that stay until they are downloaded",
        found=f"objects deleted between the listing and the download {ATTEMPTS} times",
        fix="run the command again",
    )


def _applied_entries(cache: Path) -> Dict[str, Entry]:
    raw = _load(cache / ENTRIES_FILE).get("runs", {})
    return {rel: parse_entry(rel, item) for rel, item in raw.items()} if isinstance(raw, dict) else {}


def _reseed(cache: Path, state: Dict[str, Any]) -> bool:
    """Put back the records a rebuilt index lost (from the entries kept in the cache)."""
    missing = stale(cache, _mapping(state, "seeded"))
    if not missing:
        return True
    entries = _applied_entries(cache)
    wanted = [(_layout(cache, e.relative), e) for e in entries.values()]
    return seed(cache, [(lay, e) for lay, e in wanted if run_key(lay) in set(missing)]) is not None


def refresh_from_catalog(
    transport: Any, remote_root: str, cache: Path, where: str, limit: int
) -> Optional[Applied]:
    """Bring ``cache`` up to date from the catalog (see the module's doc).

    Returns:
        what was done, or ``None`` when the store must be listed instead (no catalog, a
        catalog that does not list every run, or an index that cannot be written now).

    Raises:
        CatalogError: a catalog object is damaged or crafted.
        TransportError: a request failed.
    """
    objects = CatalogObjects(transport, remote_root)
    etag = objects.head_generation()
    state = _load(cache / STATE_FILE)
    if etag is None or state.get("where") != where:
        state = {}
    if etag is not None and state.get("generation") == etag:
        return Applied([], [], None) if _reseed(cache, state) else None
    body = objects.read_generation() if etag is not None else None
    if body is None or not parse_generation(body):
        return None
    present, entries, record = _read_new(objects, _mapping(state, "objects"))
    applied = _mapping(state, "applied")
    kept = _applied_entries(cache)
    todo = [e for rel, e in sorted(entries.items()) if e.stamp > float(applied.get(rel, -1.0))]
    runs = [(materialize(transport, remote_root, cache, e, limit), e) for e in todo]
    seeded = seed(cache, runs)
    if seeded is None:
        return None
    kept.update({e.relative: e for e in todo})
    kept = {rel: e for rel, e in kept.items() if rel in set(present)}
    atomic_write_json(
        cache / ENTRIES_FILE, {"version": 1, "runs": {r: e.to_json() for r, e in kept.items()}}, durable=False
    )
    keys = {run_key(_layout(cache, rel)) for rel in kept}
    held = {k: v for k, v in _mapping(state, "seeded").items() if k in keys}
    held.update(seeded)
    atomic_write_json(
        cache / STATE_FILE,
        {
            "version": 1,
            "where": where,
            "generation": etag,
            "objects": record,
            "applied": {rel: e.stamp for rel, e in kept.items()},
            "seeded": held,
        },
        durable=False,
    )
    return Applied([e.relative for e in todo], [r.relative for r, _ in runs], present)


__all__ = ["FETCH_KEYS", "Applied", "materialize", "refresh_from_catalog"]
