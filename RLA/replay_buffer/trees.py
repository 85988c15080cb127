"""Vectorised sum and min segment trees over float64 leaves (prioritized sampling)."""

from __future__ import annotations

import numpy as np


class SegmentTree:
    """A complete binary tree in one array; every update and query is a few numpy ops per level.

    Args:
        capacity: number of leaves used.
        op: ``"sum"`` or ``"min"``.
    """

    def __init__(self, capacity: int, op: str = "sum") -> None:
        self.capacity = int(capacity)
        self.size = 1
        while self.size < max(1, self.capacity):
            self.size *= 2
        self.op = op
        self.neutral = 0.0 if op == "sum" else np.inf
        self._ufunc = np.add if op == "sum" else np.minimum
        self.tree = np.full(2 * self.size, self.neutral, dtype=np.float64)

    def rebuild(self, leaves: np.ndarray) -> None:
        """Set all leaves at once (``len(leaves) <= capacity``, the rest neutral) and rebuild."""
        self.tree[self.size : self.size + len(leaves)] = leaves
        self.tree[self.size + len(leaves) :] = self.neutral  # inner nodes are all rewritten below
        lo = self.size // 2
        while lo >= 1:
            self.tree[lo : 2 * lo] = self._ufunc(
                self.tree[2 * lo : 4 * lo : 2], self.tree[2 * lo + 1 : 4 * lo : 2]
            )
            lo //= 2

    def update(self, indices: np.ndarray, values: np.ndarray) -> None:
        """Set leaves ``indices`` to ``values`` (last write wins on duplicates)."""
        idx = np.asarray(indices, dtype=np.int64) + self.size
        self.tree[idx] = values
        idx = np.unique(idx // 2)
        while idx.size and idx[0] >= 1:
            self.tree[idx] = self._ufunc(self.tree[2 * idx], self.tree[2 * idx + 1])
            if idx[0] == 1:
                break
            idx = np.unique(idx // 2)

    def leaves(self, indices: np.ndarray) -> np.ndarray:
        return self.tree[np.asarray(indices, dtype=np.int64) + self.size]

    @property
    def root(self) -> float:
        """Sum (or min) over all leaves."""
        return float(self.tree[1])

    def find_prefix(self, values: np.ndarray) -> np.ndarray:
        """For each value v in [0, total), the first leaf whose inclusive prefix sum exceeds v."""
        node = np.ones(len(values), dtype=np.int64)
        v = np.asarray(values, dtype=np.float64).copy()
        while node[0] < self.size if len(node) else False:
            left = self.tree[2 * node]
            right = v >= left
            v = np.where(right, v - left, v)
            node = 2 * node + right
        return node - self.size
