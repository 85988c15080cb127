"""In-memory storage: one zeroed numpy array per field."""
from __future__ import annotations

import numpy as np

from RLA.replay_buffer.storage.base import Storage


class RAMStorage(Storage):
    """Arrays in process memory (the default)."""

    kind = "ram"

    def _allocate(self, name: str, shape: tuple, dtype: np.dtype) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)
