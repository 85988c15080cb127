"""A tiny epsilon-greedy agent on a 10-armed Gaussian bandit (numpy only)."""
from __future__ import annotations

import numpy as np


class BanditAgent:
    """Sample-average value estimates with epsilon-greedy exploration."""

    def __init__(self, n_arms: int, epsilon: float, lr: float, rng: np.random.Generator) -> None:
        self.q = np.zeros(n_arms)
        self.epsilon = epsilon
        self.lr = lr
        self.rng = rng

    def act(self) -> int:
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(len(self.q)))
        return int(np.argmax(self.q))

    def learn(self, arm: int, reward: float) -> float:
        error = reward - self.q[arm]
        self.q[arm] += self.lr * error
        return float(abs(error))

    def state_dict(self) -> dict:
        return {"q": self.q.copy()}

    def load_state_dict(self, state: dict) -> None:
        self.q = np.asarray(state["q"], dtype=float).copy()
