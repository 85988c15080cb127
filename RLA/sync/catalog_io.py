"""The requests that read and write the store-side catalog (:mod:`RLA.sync.store_catalog`) on S3.

Catalog objects are immutable and uniquely named (nanosecond stamp + random nonce), so
several pushers never overwrite each other's: a compaction writes new shards holding the
union of the objects it read, then deletes exactly those (never one listed after), so an
entry is always in at least one listed object. The ``generation`` object is one PUT with
new content on every push (its ETag changes); a reader HEADs it.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import posixpath
import time
from typing import Any, Dict, List, Optional, Tuple

from RLA.sync.s3_parts import ObjectInfo
from RLA.sync.store_catalog import (
    ENTRIES,
    FOLDER,
    GENERATION,
    OBJECT_NAME,
    SHARDS,
    VERSION,
    Entry,
    check_size,
    parse_object,
)

#: Catalog objects read at the same time.
READERS = 8


class CatalogObjects:
    """The catalog below ``remote_root`` of one S3 transport (its client and key mapping).

    Args:
        transport: an :class:`RLA.sync.s3.S3Transport` (anything with ``client`` and ``key_of``).
        remote_root: the data root on the store (as the syncer names it, e.g. ``/``).
    """

    def __init__(self, transport: Any, remote_root: str) -> None:
        self.client = transport.client
        self.base = transport.key_of(posixpath.join(remote_root, FOLDER)) + "/"

    def head_generation(self) -> Optional[str]:
        """The ETag of the generation object (``None``: the store has no catalog)."""
        head = self.client.head(self.base + GENERATION)
        return None if head is None else str(head.get("ETag", ""))

    def read_generation(self) -> Optional[bytes]:
        """The generation object's bytes (``None``: no catalog yet)."""
        try:
            return self.client.get(self.base + GENERATION, 0, 4096)
        except FileNotFoundError:
            return None

    def put_generation(self, complete: bool) -> None:
        """Publish a new generation (new content, so a new ETag): readers see the change."""
        body = {
            "version": VERSION,
            "complete": complete,
            "archived": True,  # archived runs are catalogued too (see store_catalog.parse_generation)
            "written": time.time(),
            "nonce": os.urandom(8).hex(),
        }
        self.client.put(self.base + GENERATION, json.dumps(body).encode("utf-8"), {})

    def listed(self) -> List[ObjectInfo]:
        """The entry and shard objects (keys named as a push names them; other keys ignored)."""
        found: List[ObjectInfo] = []
        for kind in (SHARDS, ENTRIES):
            objects, _ = self.client.list(f"{self.base}{kind}/")
            prefix = f"{self.base}{kind}/"
            found += [o for o in objects if OBJECT_NAME.fullmatch(o.key[len(prefix) :])]
        return found

    def put(self, kind: str, data: bytes) -> str:
        """Publish one new object of ``kind`` (``entries`` or ``shards``); returns its key."""
        name = f"{time.time_ns():019d}-{os.urandom(8).hex()}.json.gz"
        key = f"{self.base}{kind}/{name}"
        self.client.put(key, data, {})
        return key

    def get(self, obj: ObjectInfo) -> List[Entry]:
        """The checked entries of one listed object (FileNotFoundError: deleted since the listing)."""
        check_size(obj.size, self.name_of(obj))
        data = self.client.get(obj.key, 0, obj.size, etag=obj.etag)
        return parse_object(data, obj.key[len(self.base) :])

    def get_all(self, objects: List[ObjectInfo]) -> List[Tuple[ObjectInfo, List[Entry]]]:
        """Every object's entries, several downloads at a time, in the order of ``objects``."""
        if len(objects) <= 1:
            return [(o, self.get(o)) for o in objects]
        with concurrent.futures.ThreadPoolExecutor(min(READERS, len(objects))) as pool:
            return list(zip(objects, pool.map(self.get, objects), strict=True))

    def delete(self, objects: List[ObjectInfo]) -> None:
        self.client.delete([o.key for o in objects])

    def name_of(self, obj: ObjectInfo) -> str:
        """``entries/<name>`` or ``shards/<name>`` of a listed object."""
        return obj.key[len(self.base) :]


def kinds(objects: List[ObjectInfo], base: str) -> Dict[str, List[ObjectInfo]]:
    """Listed objects by kind (``entries`` / ``shards``)."""
    out: Dict[str, List[ObjectInfo]] = {ENTRIES: [], SHARDS: []}
    for obj in objects:
        out[obj.key[len(base) :].split("/", 1)[0]].append(obj)
    return out
