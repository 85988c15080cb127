"""Sampling without replacement: a shuffled pass over the valid slots, then a new epoch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.samplers.base import Sampler, empty_error

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer


class WithoutReplacementSampler(Sampler):
    """Draws each slot of the current epoch's permutation once before reshuffling.

    Items added during an epoch join the next one. ``drop_last`` starts a new epoch instead
    of returning a short batch.
    """

    kind = "without_replacement"

    def __init__(self, capacity: int, **params: Any) -> None:
        super().__init__(capacity)
        self.perm: Optional[np.ndarray] = None
        self.pos = 0
        self.epoch = 0

    def sample(
        self, buffer: "ReplayBuffer", batch_size: int, rng: np.random.Generator
    ) -> Tuple[np.ndarray, np.ndarray]:
        size = len(buffer)
        if size == 0:
            raise empty_error(batch_size, 0)
        if batch_size > size:
            raise ReplayBufferError(
                "Batch larger than the buffer for sampling without replacement",
                expected=f"batch_size <= {size}",
                found=str(batch_size),
                fix="use a smaller batch or sampler='uniform'",
            )
        if self.perm is None or self.pos + batch_size > len(self.perm):
            self.perm = rng.permutation(size).astype(np.int64)
            self.pos = 0
            self.epoch += 1
        idx = self.perm[self.pos : self.pos + batch_size].copy()
        self.pos += batch_size
        return idx, np.ones(batch_size, dtype=np.float64)

    def state(self, size: int) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
        arrays = {} if self.perm is None else {"perm": self.perm}
        return {"pos": self.pos, "epoch": self.epoch, "has_perm": self.perm is not None}, arrays

    def load_state(self, state: Dict[str, Any], arrays: Dict[str, np.ndarray], size: int) -> None:
        self.pos = int(state.get("pos", 0))
        self.epoch = int(state.get("epoch", 0))
        self.perm = np.array(arrays["perm"], dtype=np.int64) if state.get("has_perm") else None

    def reset(self) -> None:
        self.perm, self.pos, self.epoch = None, 0, 0

    def invalidate(self) -> None:
        self.reset()
