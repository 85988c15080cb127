"""Bring a local cache up to date from the store's catalog instead of listing every file.

A refresh HEADs the catalog's ``generation`` object: when its ETag is the one the cache
last read, nothing changed on the store and the local index is used as it is (one
request, and one query of the index's ``meta`` to see that the records stored from the
catalog are still there). Otherwise the catalog objects are listed (a few keys), the new
ones downloaded in parallel, and each run whose newest entry is newer than the cache's gets
its record put into the local query index in one transaction, with only its folders in
the cache (:mod:`RLA.sync.catalog_seed`); runs no longer catalogued leave the cache, and
only then the cache's record of what it read is saved. Curves and logs stay on the store.
If the index lost records stored from the catalog (deleted, rebuilt, a run re-read from
the cache where its curves are not), every catalog object is read again and they are
stored again.

A store without a catalog, or whose catalog does not list every run (see
:meth:`RLA.sync.catalog_publish.Publisher._complete`), is read by listing it
(:func:`refresh_from_catalog` returns ``None``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from RLA.errors import SyncError
from RLA.fs import atomic_write_bytes
from RLA.sync.catalog_io import CatalogObjects
from RLA.sync.catalog_seed import seed
from RLA.sync.store_catalog import FETCH_KEYS, Entry, newest, parse_generation

if TYPE_CHECKING:
    from RLA.query.external import Stored

STATE_FILE = ".rla_catalog.json"
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
    """``state[name]`` without the items :func:`refresh_from_catalog` does not write (a damaged
    item is as if never read: its object or run is read again)."""
    value = state.get(name)
    if not isinstance(value, dict):
        return {}
    if name == "applied":
        return {k: v for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {
        k: v
        for k, v in value.items()
        if isinstance(v, dict)
        and isinstance(v.get("etag"), str)
        and isinstance(v.get("runs"), list)
        and all(isinstance(run, str) for run in v["runs"])
    }


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
        record.update({o.key: {"etag": o.etag, "runs": [e.key for e in es]} for o, es in got})
        present = sorted({rel for item in record.values() for rel in item["runs"]})
        return present, newest([e for _o, es in got for e in es]), record
    raise SyncError(
        "The store's catalog kept changing while it was read",
        expected="catalog objects that stay until they are downloaded",
        found=f"objects deleted between the listing and the download {ATTEMPTS} times",
        fix="run the command again",
    )


def _stored(state: Dict[str, Any]) -> Optional["Stored"]:
    """What the cache last stored in its index (``None``: nothing, or a record of another format)."""
    from RLA.query.external import Stored

    raw = state.get("stored")
    if not isinstance(raw, dict):
        return None
    runs = raw.get("runs")
    token, generation = raw.get("token"), raw.get("generation")
    if not isinstance(runs, dict) or not isinstance(token, str) or not isinstance(generation, int):
        return None
    if not all(
        isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v) for v in runs.values()
    ):
        return None  # not what _merge writes: as if the cache had stored nothing
    return Stored(token, generation, {str(k): list(v) for k, v in runs.items()})


def _save(cache: Path, state: Dict[str, Any]) -> None:
    atomic_write_bytes(cache / STATE_FILE, json.dumps(state, separators=(",", ":")).encode(), durable=False)


def _merge(
    before: Optional["Stored"], new: "Stored", present: List[str], redone: List[str]
) -> Dict[str, Any]:
    """The record of what the index holds after storing ``new`` (runs no longer on the store dropped)."""
    listed = set(present)
    runs = {k: v for k, v in (before.runs if before else {}).items() if k in listed and k not in redone}
    runs.update({k: v for k, v in new.runs.items() if k in listed})
    return {"token": new.token, "generation": new.generation, "runs": runs}


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
    from RLA.query.external import lost_records

    objects = CatalogObjects(transport, remote_root)
    etag = objects.head_generation()
    state = _load(cache / STATE_FILE)
    if etag is None or state.get("where") != where:
        state = {}
    stored = _stored(state)
    lost = lost_records(cache, stored) if stored is not None else ([], None)
    if lost is None:
        return None  # the index cannot be read now: list the store
    if etag is not None and state.get("generation") == etag and not lost[0]:
        if lost[1] is not None and stored is not None:  # rows changed, none of ours: check cheaply again
            state["stored"] = {"token": lost[1][0], "generation": lost[1][1], "runs": stored.runs}
            _save(cache, state)
        return Applied([], [], None)
    body = objects.read_generation() if etag is not None else None
    if body is None or not parse_generation(body):
        return None
    known = {} if lost[0] else _mapping(state, "objects")  # records lost: read every object again
    present, entries, record = _read_new(objects, known)
    applied = {k: v for k, v in _mapping(state, "applied").items() if k not in set(lost[0])}
    todo = [e for key, e in sorted(entries.items()) if e.stamp > float(applied.get(key, -1.0))]
    seeded = seed(transport, remote_root, cache, todo, limit)
    if seeded is None:
        return None
    new, written = seeded
    listed = set(present)
    applied.update({e.key: e.stamp for e in todo})
    state = {
        "version": 1,
        "where": where,
        "generation": etag,
        "objects": record,
        "applied": {k: v for k, v in applied.items() if k in listed},
        "stored": _merge(stored, new, present, [e.key for e in todo]),
    }
    _save(cache, state)
    return Applied([e.key for e in todo], written, present)


__all__ = ["FETCH_KEYS", "Applied", "refresh_from_catalog"]
