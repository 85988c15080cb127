"""DQN on CartPole-v1, integrated with RLA the way the README tells users to.

    python example/dqn_cartpole/main.py --seed 0 --data-root ./data
    python example/dqn_cartpole/main.py --resume dqn_cartpole/2026/11/22/14-05-06-000007 --data-root ./data

Every ``--checkpoint-interval`` steps the replay buffer is snapshotted and the model
checkpointed at the same step (both rotating, newest 3 kept); ``--resume INDEX`` continues
a killed run from them with the killed run's hyper-parameters (options given on the command
line win). The greedy policy is evaluated every ``--eval-interval`` steps; the best one is
kept as the named checkpoint ``best``.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import deque
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402

from RLA import ExperimentLoader, MatplotlibRecorder, exp_manager, logger, time_step_holder  # noqa: E402
from RLA.replay_buffer import ReplayBuffer  # noqa: E402
from dqn import DQNAgent, DQNConfig, evaluate  # noqa: E402

TASK = "dqn_cartpole"
#: Command-line options that are not hyper-parameters of the run.
NOT_HYPER = ("data_root", "config", "resume", "quiet")
KEEP = 3  # checkpoints and replay snapshots kept


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="CartPole-v1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--group", default="", help="free-form label, e.g. a sweep's name (for rla list --where)")
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--lr-end", type=float, default=0.0,
                        help="the learning rate decays linearly to this value at --total-steps")
    parser.add_argument("--total-steps", type=int, default=60_000)
    parser.add_argument("--learning-starts", type=int, default=1_000)
    parser.add_argument("--buffer-size", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--train-freq", type=int, default=4, help="env steps per gradient update")
    parser.add_argument("--target-update", type=int, default=1, help="updates between target syncs")
    parser.add_argument("--tau", type=float, default=0.005, help="target sync factor (1 = hard copy)")
    parser.add_argument("--eps-decay-steps", type=int, default=10_000)
    parser.add_argument("--eval-interval", type=int, default=2_500)
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--target-return", type=float, default=195.0)
    parser.add_argument("--stop-at-target", action="store_true",
                        help="stop once the greedy policy reaches --target-return")
    parser.add_argument("--checkpoint-interval", type=int, default=5_000)
    parser.add_argument("--figure-interval", type=int, default=10_000)
    parser.add_argument("--log-interval", type=int, default=100)
    parser.add_argument("--data-root", default=os.path.join(HERE, "data"))
    parser.add_argument("--config", default=os.path.join(HERE, "rla_config.yaml"))
    parser.add_argument("--resume", default=None, help="index of a run to continue")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stdout")
    return parser


def explicit_options(argv: Optional[Sequence[str]]) -> List[str]:
    """The options the command line sets explicitly (they win over a resumed run's values)."""
    parser = build_parser()
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    return sorted(vars(parser.parse_args(argv)))


def make_buffer(args: argparse.Namespace, obs_dim: int) -> ReplayBuffer:
    schema = {"obs": ((obs_dim,), "float32"), "action": ((), "int64"), "reward": ((), "float32"),
              "next_obs": ((obs_dim,), "float32"), "terminated": ((), "bool"), "done": ((), "bool")}
    return ReplayBuffer(args.buffer_size, schema=schema, seed=args.seed)


def buffer_digest(buffer: ReplayBuffer) -> str:
    """A short hash of every stored transition (to check a restored buffer is the same)."""
    digest = hashlib.sha256(f"{len(buffer)}/{buffer.cursor}".encode())
    if len(buffer):
        items = buffer.get(np.arange(len(buffer)))
        for key in sorted(items):
            digest.update(key.encode())
            digest.update(np.ascontiguousarray(np.asarray(items[key])).tobytes())
    return digest.hexdigest()[:16]


def plot_curve(history: Sequence[Sequence[float]], title: str, target: float) -> None:
    def draw() -> None:
        import matplotlib.pyplot as plt

        steps, values = zip(*history)
        plt.plot(steps, values, marker="o", label="greedy return")
        plt.axhline(target, color="grey", linestyle="--", label=f"target {target:g}")

    MatplotlibRecorder.pretty_plot_wrapper("learning_curve", draw, xlabel="time-step", ylabel="return", title=title)


def env_state(env: gym.Env, obs: np.ndarray, episode_return: float) -> Dict[str, Any]:
    """What it takes to continue the current episode exactly (classic-control envs)."""
    state = getattr(env.unwrapped, "state", None)
    return {"obs": np.asarray(obs), "episode_return": episode_return,
            "state": None if state is None else np.array(state, dtype=np.float64),
            "elapsed": int(getattr(env, "_elapsed_steps", 0) or 0),
            "np_random": env.unwrapped.np_random.bit_generator.state}


def restore_env(env: gym.Env, saved: Dict[str, Any], seed: int) -> tuple:
    env.reset(seed=seed)
    obs = np.asarray(saved["obs"], dtype=np.float32)
    if saved.get("state") is not None and hasattr(env.unwrapped, "state"):
        env.unwrapped.state = np.array(saved["state"], dtype=np.float64)
        env.unwrapped.steps_beyond_terminated = None
        env.unwrapped.np_random.bit_generator.state = saved["np_random"]
        if hasattr(env, "_elapsed_steps"):
            env._elapsed_steps = int(saved["elapsed"])
        return obs, float(saved["episode_return"])
    return env.reset()[0], 0.0  # other envs: start a new episode


def say(args: argparse.Namespace, message: str) -> None:
    logger.info(message)
    if not args.quiet:
        print(message, flush=True)


def main(argv: Optional[Sequence[str]] = None) -> float:
    args = build_parser().parse_args(argv)
    hyper = {k: v for k, v in vars(args).items() if k not in NOT_HYPER}

    # --- RLA: configure once ---------------------------------------------------------------
    exp_manager.set_hyper_param(**hyper)
    loader: Optional[ExperimentLoader] = None
    overwrite: List[str] = []
    if args.resume:  # continue a run: its hyper-parameters, except those given on the command line
        loader = ExperimentLoader()
        loader.config(record_date=args.resume, root=args.data_root)
        overwrite = [k for k in explicit_options(argv) if k in hyper]
        hyper = vars(loader.import_hyper_parameters(hp_to_overwrite=overwrite))
        exp_manager.set_hyper_param(**hyper)
        args = argparse.Namespace(**{**vars(args), **{k: v for k, v in hyper.items() if k in vars(args)}})
    exp_manager.add_record_param(["lr", "seed"])
    exp_manager.configure(TASK, rla_config=args.config, data_root=args.data_root, run_file=__file__)
    exp_manager.log_files_gen()
    exp_manager.print_args()
    exp_manager.new_saver(max_to_keep=KEEP)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = gym.make(args.env_id)
    agent = DQNAgent(env.observation_space.shape[0], env.action_space.n,
                     DQNConfig(lr=args.lr, hidden=args.hidden, batch_size=args.batch_size,
                               target_update=args.target_update, tau=args.tau,
                               eps_decay_steps=args.eps_decay_steps))
    buffer = make_buffer(args, env.observation_space.shape[0])
    rng = np.random.default_rng(args.seed)
    obs, _ = env.reset(seed=args.seed)
    start, episodes, best, history, episode_return = 0, 0, -np.inf, [], 0.0
    returns: deque = deque(maxlen=20)

    # --- RLA: resume -------------------------------------------------------------------------
    if loader is not None:
        loader.fork_log_files(hp_to_overwrite=overwrite)
        start, state, saved = loader.load_from_record_date()
        agent.load_state_dict(state)
        episodes, best, history = int(saved["episodes"]), float(saved["best"]), [list(h) for h in saved["history"]]
        returns.extend(saved["recent_returns"])
        rng.bit_generator.state = saved["rng"]
        obs, episode_return = restore_env(env, saved["env"], args.seed)
        buffer = loader.load_replay_buffer(buffer, step=start)
        say(args, f"resumed from {loader.past_run.index} at step {start}: {len(buffer)} transitions, "
                  f"buffer digest {buffer_digest(buffer)}")

    loss, figure_step = float("nan"), -1
    for step in range(start, args.total_steps):
        time_step_holder.set_time(step)
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
            if args.lr_end is not None:
                frac = (step - args.learning_starts) / max(1, args.total_steps - args.learning_starts)
                agent.set_lr(args.lr + frac * (args.lr_end - args.lr))
            batch, _, _ = buffer.sample(args.batch_size)
            loss = agent.update(batch)

        done_step = step + 1
        time_step_holder.set_time(done_step)
        evaluate_now = done_step % args.eval_interval == 0
        if evaluate_now:
            score = evaluate(agent, args.env_id, args.eval_episodes, seed=10_000 + done_step)
            history.append([done_step, score])
            logger.record_tabular("eval/return", score)
            if score > best:
                best = score
                exp_manager.save_checkpoint(model_dict=agent.state_dict(), name="best")
            if not args.quiet:
                print(f"step {done_step}: greedy return {score:.1f} (best {best:.1f})", flush=True)
        if evaluate_now or done_step % args.log_interval == 0:  # one row per logged step
            logger.record_tabular("train/episode_return", float(np.mean(returns)) if returns else float("nan"))
            logger.record_tabular("train/loss", loss)
            logger.record_tabular("train/epsilon", agent.epsilon(step))
            logger.record_tabular("train/episodes", episodes)
            logger.dump_tabular()
        if done_step % args.figure_interval == 0 and history:
            plot_curve(history, f"{args.env_id} lr={args.lr} seed={args.seed}", args.target_return)
            figure_step = done_step
        if done_step % args.checkpoint_interval == 0:
            # The snapshot first: the newest checkpoint then always has its replay snapshot.
            exp_manager.save_replay_buffer(buffer, step=done_step, keep_last=KEEP)
            exp_manager.save_checkpoint(model_dict=agent.state_dict(), related_variable={
                "episodes": episodes, "best": best, "history": history, "recent_returns": list(returns),
                "rng": rng.bit_generator.state, "env": env_state(env, obs, episode_return)})
            logger.info(f"checkpoint at step {done_step}: buffer digest {buffer_digest(buffer)}")
            exp_manager.sync_log_file(skip_error=True)
        if args.stop_at_target and evaluate_now and history[-1][1] >= args.target_return:
            say(args, f"target return {args.target_return:g} reached at step {done_step}")
            break

    if history and figure_step != time_step_holder.get_time():
        plot_curve(history, f"{args.env_id} lr={args.lr} seed={args.seed}", args.target_return)
    env.close()
    buffer.close()
    say(args, f"best greedy return {best:.1f}; run {exp_manager.index}")
    exp_manager.sync_log_file(skip_error=True)
    exp_manager.finish()
    return float(best)


if __name__ == "__main__":
    main()
