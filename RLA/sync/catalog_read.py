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

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.errors import SyncError, UnsafePathError
from RLA.fs import TEMP_SUFFIX, atomic_file, atomic_write_bytes, temp_prefix
from RLA.layout import ARCHIVE_TESTER, CODE, LOG, RunLayout
from RLA.safe_paths import no_symlink_between
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


class _Folders:
    """Plain folders below the cache, created as needed; each is checked once (no link, no file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.top = os.fspath(root)
        self.checked = {self.top}

    def ensure(self, path: str) -> str:
        if path in self.checked:
            return path
        if not path.startswith(self.top + os.sep):
            raise UnsafePathError(
                f"{path!r} is not inside {self.root}",
                expected="a folder of the cache",
                found=path,
                fix="report this: run names are checked before",
            )
        self.ensure(os.path.dirname(path))
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            os.mkdir(path)
            mode = stat.S_IFDIR
        if not stat.S_ISDIR(mode):
            no_symlink_between(self.root, path)  # raises for a link
            raise UnsafePathError(
                f"{path!r} is not a folder",
                expected="a folder",
                found="a file",
                fix="remove it from the cache",
            )
        self.checked.add(path)
        return path


def _write(path: str, data: bytes, mtime: Optional[float]) -> bool:
    """Replace ``path`` with ``data`` (temp + rename, never through a link; skipped when it holds
    them already); set its time."""
    try:
        st: Optional[os.stat_result] = os.lstat(path)
    except FileNotFoundError:
        st = None
    same = False
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
        with open(path, "rb") as handle:
            same = handle.read() == data
    if not same:
        tmp = os.path.join(os.path.dirname(path), f"{temp_prefix(path)}{os.getpid()}{TEMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
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


def materialize(transport: Any, remote_root: str, folders: "_Folders", entry: Entry, limit: int) -> RunLayout:
    """Write the cached files of ``entry``'s run (every path checked); returns its local layout.

    Cached small files the entry no longer has are removed, and so is a cached
    ``progress.csv`` of a run that has none; a cached copy of curves the entry summarizes
    stays (the index takes the entry's summary; a command that reads the curves
    refreshes them).
    """
    local = _layout(folders.root, entry.relative)  # its name was checked when the entry was parsed
    folder = {t: os.fspath(local.path(t)) for t in (LOG, CODE, ARCHIVE_TESTER)}
    for key in (*SMALL_KEYS, PROGRESS_KEY):
        data_type, _, inner = key.partition("/")
        path = os.path.join(folder[data_type], inner) if inner else folder[data_type]
        if key in entry.texts:
            text, mtime = entry.texts[key]
            folders.ensure(os.path.dirname(path))
            _write(path, text.encode("utf-8"), mtime)
        elif key not in entry.fetch and (key != PROGRESS_KEY or entry.progress is None):
            # gone from the run; a cached progress.csv of a run that has none is stale
            if os.path.lexists(path):
                folders.ensure(os.path.dirname(path))
                if not os.path.isdir(path):
                    os.unlink(path)
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
    lost = set(missing)
    return seed(cache, [(lay, e) for lay, e in wanted if run_key(lay) in lost]) is not None


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
    folders = _Folders(cache)
    runs = [(materialize(transport, remote_root, folders, e, limit), e) for e in todo]
    seeded = seed(cache, runs)
    if seeded is None:
        return None
    kept.update({e.relative: e for e in todo})
    listed = set(present)
    kept = {rel: e for rel, e in kept.items() if rel in listed}
    kept_json = {"version": 1, "runs": {r: e.to_json() for r, e in kept.items()}}
    atomic_write_bytes(
        cache / ENTRIES_FILE, json.dumps(kept_json, separators=(",", ":")).encode(), durable=False
    )
    keys = {run_key(_layout(cache, rel)) for rel in kept}
    held = {k: v for k, v in _mapping(state, "seeded").items() if k in keys}
    held.update(seeded)
    state = {
        "version": 1,
        "where": where,
        "generation": etag,
        "objects": record,
        "applied": {rel: e.stamp for rel, e in kept.items()},
        "seeded": held,
    }
    atomic_write_bytes(cache / STATE_FILE, json.dumps(state, separators=(",", ":")).encode(), durable=False)
    return Applied([e.relative for e in todo], [r.relative for r, _ in runs], present)


__all__ = ["FETCH_KEYS", "Applied", "materialize", "refresh_from_catalog"]
