"""Disk-backed storage: one ``numpy.memmap`` file per field, in a private directory."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, Optional

import numpy as np

from RLA.replay_buffer.storage.base import Storage


class MemmapStorage(Storage):
    """Arrays backed by files under ``directory`` (a temporary directory when omitted).

    Every allocation gets its own sub-directory, so a transactional load can build new files
    next to the live ones and swap; ``close()`` removes the sub-directory.

    Args:
        directory: parent directory of the backing files.
    """

    kind = "memmap"

    def __init__(self, directory: Optional[str] = None, **options: Any) -> None:
        super().__init__(directory=directory, **options)
        self._owns_parent = directory is None
        parent = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="rla-rb-"))
        parent.mkdir(parents=True, exist_ok=True)
        self.parent = parent
        self.directory = parent / f"storage-{uuid.uuid4().hex[:12]}"
        self.directory.mkdir()

    def _allocate(self, name: str, shape: tuple, dtype: np.dtype) -> np.ndarray:
        path = self.directory / f"{name}.mmap"
        if int(np.prod(shape)) == 0:
            return np.zeros(shape, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="w+", shape=shape)

    def flush(self) -> None:
        for arr in self.arrays.values():
            if isinstance(arr, np.memmap):
                arr.flush()

    def close(self) -> None:
        if self.closed:
            return
        super().close()
        shutil.rmtree(self.directory, ignore_errors=True)
        if self._owns_parent:
            shutil.rmtree(self.parent, ignore_errors=True)
