"""Proportional prioritized sampling (PER) on vectorised sum/min trees."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.samplers.base import Sampler, empty_error
from RLA.replay_buffer.trees import SegmentTree

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer


class PrioritizedSampler(Sampler):
    """P(i) = (p_i + eps)^alpha / sum; IS weights (N P(i))^-beta / max, stratified draws.

    The raw priorities ``p_i`` are the state (float64, saved to the bit); the tree leaves are
    a deterministic function of them, so a restored buffer samples exactly as the original.

    Args:
        capacity: number of slots.
        alpha: priority exponent.
        beta: importance-sampling exponent (may be annealed by setting ``sampler.beta``).
        eps: added to every priority so none is zero.
        initial_priority: priority of the first items (new items get the running maximum).
    """

    kind = "prioritized"

    def __init__(
        self,
        capacity: int,
        alpha: float = 0.6,
        beta: float = 0.4,
        eps: float = 1e-6,
        initial_priority: float = 1.0,
    ) -> None:
        super().__init__(capacity)
        self.alpha, self.beta, self.eps = float(alpha), float(beta), float(eps)
        self.initial_priority = float(initial_priority)
        self.max_priority = self.initial_priority
        self.raw = np.zeros(self.capacity, dtype=np.float64)
        self.sum_tree = SegmentTree(self.capacity, "sum")
        self.min_tree = SegmentTree(self.capacity, "min")

    def params(self) -> Dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "eps": self.eps,
            "initial_priority": self.initial_priority,
        }

    def _leaves(self, raw: np.ndarray) -> np.ndarray:
        leaves = raw + self.eps
        leaves **= self.alpha  # in place, with the same scalar-power paths as ``**``
        return leaves

    def _set(self, indices: np.ndarray, raw: np.ndarray) -> None:
        self.raw[indices] = raw
        leaves = self._leaves(self.raw[indices])
        self.sum_tree.update(indices, leaves)
        self.min_tree.update(indices, leaves)

    def on_add(self, slots: np.ndarray) -> None:
        self._set(slots, np.full(len(slots), self.max_priority))

    def sample(
        self, buffer: "ReplayBuffer", batch_size: int, rng: np.random.Generator
    ) -> Tuple[np.ndarray, np.ndarray]:
        size = len(buffer)
        if size == 0:
            raise empty_error(batch_size, 0)
        total = self.sum_tree.root
        u = (np.arange(batch_size) + rng.random(batch_size)) / batch_size * total
        idx = np.minimum(self.sum_tree.find_prefix(u), size - 1)
        probs = self.sum_tree.leaves(idx) / total
        min_prob = self.min_tree.root / total
        weights = (size * probs) ** (-self.beta) / (size * min_prob) ** (-self.beta)
        return idx, weights

    def update_priority(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        prio = np.asarray(priorities, dtype=np.float64).reshape(-1)
        if idx.shape != prio.shape:
            raise ReplayBufferError(
                "update_priority got misaligned arguments",
                expected=f"{idx.size} priorities",
                found=str(prio.size),
                fix="pass one priority per index",
            )
        if prio.size and (not np.all(np.isfinite(prio)) or prio.min() < 0):
            raise ReplayBufferError(
                "Priorities must be finite and non-negative",
                expected="values >= 0",
                found=f"min {prio.min()!r}",
                fix="pass abs(td_error) or clip the values",
            )
        if idx.size and (idx.min() < 0 or idx.max() >= self.capacity):
            raise ReplayBufferError(
                "update_priority index out of range",
                expected=f"0 <= index < {self.capacity}",
                found=f"[{idx.min()}, {idx.max()}]",
                fix="pass the indices returned by sample()",
            )
        if prio.size:
            self.max_priority = max(self.max_priority, float(prio.max()))
            self._set(idx, prio)

    def priority(self, indices: np.ndarray) -> np.ndarray:
        return self.raw[np.asarray(indices, dtype=np.int64)].copy()

    def state(self, size: int) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
        return ({"max_priority": self.max_priority, **self.params()}, {"priority": self.raw[:size]})

    def load_state(self, state: Dict[str, Any], arrays: Dict[str, np.ndarray], size: int) -> None:
        self.alpha = float(state.get("alpha", self.alpha))
        self.beta = float(state.get("beta", self.beta))
        self.eps = float(state.get("eps", self.eps))
        self.max_priority = float(state.get("max_priority", self.initial_priority))
        self.raw[:size] = arrays["priority"][:size]  # the constructor's zeros elsewhere
        self.raw[size:] = 0.0
        leaves = self._leaves(self.raw[:size])
        self.sum_tree.rebuild(leaves)
        self.min_tree.rebuild(leaves)

    def reset(self) -> None:
        self.max_priority = self.initial_priority
        self.raw.fill(0)
        self.sum_tree.rebuild(np.zeros(0))
        self.min_tree.rebuild(np.zeros(0))
