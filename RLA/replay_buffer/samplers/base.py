"""The sampler extension point: base class and registry of sampling strategies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.registry import Registry

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

SAMPLERS: "Registry[type]" = Registry("replay-buffer sampler", "rla.replay_samplers")


class Sampler:
    """Chooses slots to sample; owns any sampling state (priorities, permutations).

    Randomness always comes from the buffer's own generator (passed in), so saving the
    buffer's RNG state plus :meth:`state` reproduces the sample stream exactly.

    Args:
        capacity: the buffer capacity (number of slots).
    """

    kind = "base"

    def __init__(self, capacity: int, **params: Any) -> None:
        if params:
            raise ReplayBufferError(
                f"Unknown option(s) for the {self.kind!r} sampler",
                expected="no extra options",
                found=", ".join(sorted(params)),
                fix="remove them or pick another sampler",
            )
        self.capacity = int(capacity)

    def params(self) -> Dict[str, Any]:
        """Constructor options (JSON), recorded in the snapshot manifest."""
        return {}

    def on_add(self, slots: np.ndarray) -> None:
        """Called after ``slots`` were (over)written with new items."""

    def sample(
        self, buffer: "ReplayBuffer", batch_size: int, rng: np.random.Generator
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Return ``(indices, weights)`` for ``batch_size`` draws."""
        raise NotImplementedError

    def update_priority(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        raise ReplayBufferError(
            f"The {self.kind!r} sampler has no priorities",
            expected="sampler='prioritized'",
            found=f"sampler={self.kind!r}",
            fix="build the buffer with sampler='prioritized'",
        )

    def priority(self, indices: np.ndarray) -> np.ndarray:
        """Priorities of ``indices`` (1.0 for samplers without priorities)."""
        return np.ones(len(indices), dtype=np.float64)

    def state(self, size: int) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
        """Small JSON state plus arrays (only the first ``size`` valid slots)."""
        return {}, {}

    def load_state(self, state: Dict[str, Any], arrays: Dict[str, np.ndarray], size: int) -> None:
        """Restore what :meth:`state` returned."""

    def reset(self) -> None:
        """Forget everything (``buffer.clear()``)."""

    def invalidate(self) -> None:
        """Drop derived caches after the buffer changed wholesale (load, reshard)."""


def make_sampler(kind: str, capacity: int, **params: Any) -> Sampler:
    """Instantiate the sampler registered as ``kind``."""
    cls = SAMPLERS.get(kind)
    try:
        return cls(capacity, **params)
    except TypeError as exc:
        raise ReplayBufferError(
            f"Bad options for the {kind!r} sampler",
            expected="the options its constructor accepts",
            found=", ".join(sorted(params)) or "none",
            fix=f"check the options ({exc})",
        ) from exc


def empty_error(batch_size: int, size: int) -> ReplayBufferError:
    return ReplayBufferError(
        "Cannot sample from an empty replay buffer",
        expected=f"at least one item for a batch of {batch_size}",
        found=f"{size} items",
        fix="add data before sampling",
    )


SAMPLERS.register("uniform", "RLA.replay_buffer.samplers.uniform:UniformSampler")
SAMPLERS.register("prioritized", "RLA.replay_buffer.samplers.prioritized:PrioritizedSampler")
SAMPLERS.register(
    "without_replacement", "RLA.replay_buffer.samplers.without_replacement:WithoutReplacementSampler"
)
SAMPLERS.register("sequence", "RLA.replay_buffer.samplers.sequence:SequenceSampler")
