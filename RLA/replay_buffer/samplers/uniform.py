"""Uniform sampling with replacement over the valid slots."""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple

import numpy as np

from RLA.replay_buffer.samplers.base import Sampler, empty_error

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer


class UniformSampler(Sampler):
    """Every valid slot has the same probability; weights are all 1."""

    kind = "uniform"

    def sample(
        self, buffer: "ReplayBuffer", batch_size: int, rng: np.random.Generator
    ) -> Tuple[np.ndarray, np.ndarray]:
        if len(buffer) == 0:
            raise empty_error(batch_size, 0)
        idx = rng.integers(0, len(buffer), size=batch_size, dtype=np.int64)
        return idx, np.ones(batch_size, dtype=np.float64)
