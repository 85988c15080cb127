"""The DQN training loop of the sweep examples, independent of the engine that runs it.

``train(config, report, restore)`` is used by ``tune_sweep.py`` (Ray Tune: ``report`` and
``restore`` of :mod:`RLA.integrations.ray_tune`) and by ``hydra_main.py`` (Hydra: a plain
report into the RLA run). ``config`` holds ``main.py``'s options (see ``DEFAULTS``).
"""
from __future__ import annotations

import argparse
from collections import deque
from typing import Any, Callable, Dict

import numpy as np

from dqn import DQNAgent, DQNConfig, evaluate
from main import build_parser, env_state, make_buffer, restore_env

#: main.py's defaults: every key a sweep config may set.
DEFAULTS: Dict[str, Any] = {k: v for k, v in vars(build_parser().parse_args([])).items()
                            if k not in ("data_root", "config", "resume", "quiet")}


def train(config: Dict[str, Any], report: Callable[..., None],
          restore: Callable[[Any], tuple]) -> float:
    """Train one DQN; ``report(metrics, step=, checkpoint=, variables=, buffer=)`` every log
    interval (with a checkpoint every checkpoint interval); returns the best greedy return."""
    import gymnasium as gym
    import torch

    args = argparse.Namespace(**{**DEFAULTS, **config})
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = gym.make(args.env_id)
    agent = DQNAgent(env.observation_space.shape[0], env.action_space.n,
                     DQNConfig(lr=args.lr, hidden=args.hidden, batch_size=args.batch_size,
                               target_update=args.target_update, tau=args.tau, eps_decay_steps=args.eps_decay_steps))
    buffer = make_buffer(args, env.observation_space.shape[0])
    rng = np.random.default_rng(args.seed)
    obs, _ = env.reset(seed=args.seed)
    episodes, best, episode_return, loss, score = 0, -np.inf, 0.0, float("nan"), float("nan")
    returns: deque = deque(maxlen=20)
    start, state, saved = restore(buffer)         # (None, {}, {}) unless the engine restarted us
    if start is not None:
        agent.load_state_dict(state)
        episodes, best, score = int(saved["episodes"]), float(saved["best"]), float(saved["score"])
        returns.extend(saved["recent_returns"])
        rng.bit_generator.state = saved["rng"]
        obs, episode_return = restore_env(env, saved["env"], args.seed)
    for step in range(start or 0, args.total_steps):
        action = agent.act(obs, step, rng)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        buffer.add({"obs": obs[None], "action": np.array([action]), "reward": np.array([reward], np.float32),
                    "next_obs": next_obs[None], "terminated": np.array([terminated]),
                    "done": np.array([terminated or truncated])}, env_ids=[0])
        obs, episode_return = next_obs, episode_return + float(reward)
        if terminated or truncated:
            returns.append(episode_return)
            episodes += 1
            obs, episode_return = env.reset()[0], 0.0
        if step >= args.learning_starts and step % args.train_freq == 0:
            frac = (step - args.learning_starts) / max(1, args.total_steps - args.learning_starts)
            agent.set_lr(args.lr + frac * (args.lr_end - args.lr))
            loss = agent.update(buffer.sample(args.batch_size)[0])
        done = step + 1
        if done % args.eval_interval == 0:
            score = evaluate(agent, args.env_id, args.eval_episodes, seed=10_000 + done)
            best = max(best, score)
        if done % args.log_interval:
            continue
        metrics = {"eval/return": score, "train/episode_return": float(np.mean(returns)) if returns else 0.0,
                   "train/loss": loss, "train/episodes": episodes}
        if done % args.checkpoint_interval == 0:
            report(metrics, step=done, checkpoint=agent.state_dict(), buffer=buffer, variables={
                "episodes": episodes, "best": best, "score": score, "recent_returns": list(returns),
                "rng": rng.bit_generator.state, "env": env_state(env, obs, episode_return)})
        else:
            report(metrics, step=done)
    env.close()
    buffer.close()
    return float(best)
