"""How a cache refresh of an object store uses its catalog, for listing runs or for their files.

Listing runs (``files=False``): the catalog answers (:func:`RLA.sync.catalog_read.refresh_from_catalog`).
Reading curves and logs (``files=True``): the store is listed and the changed files fetched
as before, but only when the catalog's generation changed since the last such refresh; an
unchanged generation (no push since) costs one HEAD.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Tuple

from RLA.fs import atomic_write_json, read_json
from RLA.sync.catalog_io import CatalogObjects
from RLA.sync.catalog_read import refresh_from_catalog
from RLA.sync.store_catalog import parse_generation

#: The generation of the catalog when the cache's files were last brought up to date.
FILES_STATE = ".rla_catalog_files.json"


def _saved(cache: Path, where: str) -> Optional[str]:
    try:
        raw = read_json(cache / FILES_STATE)
    except (OSError, ValueError):
        return None
    if isinstance(raw, dict) and raw.get("where") == where and isinstance(raw.get("generation"), str):
        return str(raw["generation"])
    return None


def files_generation(transport: Any, remote_root: str) -> Optional[str]:
    """The ETag of a complete catalog's generation (``None``: no catalog, or an incomplete one)."""
    objects = CatalogObjects(transport, remote_root)
    etag = objects.head_generation()
    body = objects.read_generation() if etag is not None else None
    return etag if body is not None and parse_generation(body) else None


def save_files_generation(cache: Path, where: str, etag: str) -> None:
    """Record that the cache's files are those of the generation ``etag`` (read before the listing)."""
    atomic_write_json(cache / FILES_STATE, {"version": 1, "where": where, "generation": etag}, durable=False)


def by_catalog(
    transport: Any, remote_root: str, cache: Path, where: str, limit: int, files: bool
) -> Tuple[bool, Optional[List[str]]]:
    """Refresh ``cache`` through the catalog if it can.

    Returns:
        ``(done, present)``: ``done`` False means the store must be listed; ``present`` is
        the runs the store holds (``None``: unchanged, nothing to prune).
    """
    if files:
        saved = _saved(cache, where)
        return saved is not None and CatalogObjects(transport, remote_root).head_generation() == saved, None
    applied = refresh_from_catalog(transport, remote_root, cache, where, limit)
    if applied is None:
        return False, None
    return True, applied.present
