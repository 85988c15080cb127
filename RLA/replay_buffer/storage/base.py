"""The storage extension point: where a buffer's per-field arrays live (base class + registry)."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from RLA.registry import Registry
from RLA.replay_buffer.schema import Schema

STORAGES: "Registry[type]" = Registry("replay-buffer storage", "rla.replay_storages")


class Storage:
    """Owns one ``(capacity, *shape)`` array per field (user fields and meta fields).

    Subclasses implement :meth:`_allocate`. A storage is a context manager; ``close()`` is
    idempotent and releases files or memory.
    """

    kind = "base"
    #: Whether the arrays are anonymous process memory, which a load's O_DIRECT reads may
    #: fill in place (never a mapped file).
    anonymous_memory = False

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.arrays: Dict[str, np.ndarray] = {}
        self.capacity = 0
        self.closed = False

    def allocate(self, schema: Schema, capacity: int) -> "Storage":
        """Create zeroed arrays for every field of ``schema``; returns ``self``."""
        self.capacity = int(capacity)
        for spec in schema.all_fields():
            self.arrays[spec.name] = self._allocate(spec.name, (self.capacity, *spec.shape), spec.dtype)
        return self

    def _allocate(self, name: str, shape: tuple, dtype: np.dtype) -> np.ndarray:
        raise NotImplementedError

    def new_like(self) -> "Storage":
        """A fresh, unallocated storage with the same options (used for transactional loads)."""
        return type(self)(**self.options)

    def populate(self, name: str, start: int, stop: int) -> None:
        """Fault in rows ``[start, stop)`` of ``name`` ahead of a bulk write (a hint; no-op).

        Must never change the contents: a loader calls it from a helper thread while other
        threads are already writing rows.
        """

    def flush(self) -> None:
        """Push pending writes to the backing store (no-op for RAM)."""

    def close(self) -> None:
        """Release the arrays; safe to call twice."""
        self.closed = True
        self.arrays = {}

    def __enter__(self) -> "Storage":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_storage(kind: str = "ram", **options: Any) -> Storage:
    """Instantiate the storage registered as ``kind``."""
    return STORAGES.get(kind)(**options)


STORAGES.register("ram", "RLA.replay_buffer.storage.ram:RAMStorage")
STORAGES.register("memmap", "RLA.replay_buffer.storage.memmap:MemmapStorage")
