"""A small DQN (double DQN, Huber loss, target network) for discrete-action gymnasium tasks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

import numpy as np
import torch
from torch import nn


def make_q_network(obs_dim: int, n_actions: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, n_actions))


@dataclass
class DQNConfig:
    lr: float = 1e-3
    gamma: float = 0.99
    hidden: int = 128
    batch_size: int = 64
    target_update: int = 500
    tau: float = 1.0
    eps_start: float = 1.0
    eps_end: float = 0.02
    eps_decay_steps: int = 10_000


class DQNAgent:
    """Epsilon-greedy double DQN over a Q-network and a target network.

    Every ``target_update`` updates the target moves toward the Q-network by ``tau``
    (``tau=1`` copies it: classic DQN; a small ``tau`` with ``target_update=1`` is a
    Polyak average, which damps the oscillations plain DQN shows on CartPole).
    """

    def __init__(self, obs_dim: int, n_actions: int, cfg: DQNConfig) -> None:
        self.cfg = cfg
        self.n_actions = n_actions
        self.q = make_q_network(obs_dim, n_actions, cfg.hidden)
        self.target = make_q_network(obs_dim, n_actions, cfg.hidden)
        self.target.load_state_dict(self.q.state_dict())
        self.optim = torch.optim.Adam(self.q.parameters(), lr=cfg.lr)
        self.updates = 0

    def epsilon(self, step: int) -> float:
        frac = min(1.0, step / self.cfg.eps_decay_steps)
        return self.cfg.eps_start + frac * (self.cfg.eps_end - self.cfg.eps_start)

    def act(self, obs: np.ndarray, step: int, rng: np.random.Generator, greedy: bool = False) -> int:
        if not greedy and rng.random() < self.epsilon(step):
            return int(rng.integers(self.n_actions))
        with torch.no_grad():
            return int(self.q(torch.as_tensor(obs, dtype=torch.float32)[None]).argmax(1).item())

    def update(self, batch: Dict[str, np.ndarray]) -> float:
        obs = torch.as_tensor(np.asarray(batch["obs"]), dtype=torch.float32)
        action = torch.as_tensor(np.asarray(batch["action"]), dtype=torch.int64).reshape(-1, 1)
        reward = torch.as_tensor(np.asarray(batch["reward"]), dtype=torch.float32).reshape(-1)
        next_obs = torch.as_tensor(np.asarray(batch["next_obs"]), dtype=torch.float32)
        terminated = torch.as_tensor(np.asarray(batch["terminated"]), dtype=torch.float32).reshape(-1)
        with torch.no_grad():
            next_action = self.q(next_obs).argmax(1, keepdim=True)
            next_q = self.target(next_obs).gather(1, next_action).squeeze(1)
            target = reward + self.cfg.gamma * (1.0 - terminated) * next_q
        q = self.q(obs).gather(1, action).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.optim.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), 10.0)
        self.optim.step()
        self.updates += 1
        if self.updates % self.cfg.target_update == 0:
            self.sync_target()
        return float(loss.item())

    @torch.no_grad()
    def sync_target(self) -> None:
        if self.cfg.tau >= 1.0:
            self.target.load_state_dict(self.q.state_dict())
            return
        for target, source in zip(self.target.parameters(), self.q.parameters()):
            target.lerp_(source, self.cfg.tau)

    def set_lr(self, lr: float) -> None:
        for group in self.optim.param_groups:
            group["lr"] = lr

    def state_dict(self) -> Dict[str, Dict]:
        return {"q": self.q.state_dict(), "target": self.target.state_dict(), "optim": self.optim.state_dict(),
                "updates": torch.tensor(self.updates)}

    def load_state_dict(self, state: Dict[str, Dict]) -> None:
        self.q.load_state_dict(state["q"])
        self.target.load_state_dict(state["target"])
        self.optim.load_state_dict(state["optim"])
        self.updates = int(state.get("updates", 0))


def evaluate(agent: DQNAgent, env_id: str, episodes: int, seed: int) -> float:
    """Mean undiscounted return of the greedy policy over ``episodes`` episodes."""
    import gymnasium as gym

    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    returns = []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, 0, rng, greedy=True))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    return float(np.mean(returns))
