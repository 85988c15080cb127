"""DQN on CartPole-v1, integrated with RLA the way the README tells users to.

    python example/dqn_cartpole/main.py --seed 0 --lr 5e-4 --data-root ./data
    python example/dqn_cartpole/main.py --resume dqn_cartpole/2026/11/22/14-05-06-000007 --data-root ./data

Every `--checkpoint-interval` steps the model is checkpointed (rotating, newest 3 kept) and the
replay buffer snapshotted at the same step; `--resume INDEX` continues a killed run from them.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import deque

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402

from RLA import ExperimentLoader, MatplotlibRecorder, exp_manager, logger, time_step_holder  # noqa: E402
from RLA.replay_buffer import ReplayBuffer  # noqa: E402
from dqn import DQNAgent, DQNConfig, evaluate  # noqa: E402

TASK = "dqn_cartpole"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="CartPole-v1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--total-steps", type=int, default=60_000)
    parser.add_argument("--learning-starts", type=int, default=1_000)
    parser.add_argument("--buffer-size", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--target-update", type=int, default=500)
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
    return parser.parse_args(argv)


def make_buffer(args: argparse.Namespace) -> ReplayBuffer:
    schema = {"obs": ((4,), "float32"), "action": ((), "int64"), "reward": ((), "float32"),
              "next_obs": ((4,), "float32"), "terminated": ((), "bool"), "done": ((), "bool")}
    return ReplayBuffer(args.buffer_size, schema=schema, seed=args.seed)


def buffer_digest(buffer: ReplayBuffer) -> str:
    """A short hash of every stored transition (to check a restored buffer is the same)."""
    import hashlib

    digest = hashlib.sha256(str(len(buffer)).encode())
    if len(buffer):
        items = buffer.get(np.arange(len(buffer)))
        for key in sorted(items):
            digest.update(key.encode())
            digest.update(np.ascontiguousarray(np.asarray(items[key])).tobytes())
    return digest.hexdigest()[:16]


def plot_curve(history: list, title: str) -> None:
    def draw() -> None:
        import matplotlib.pyplot as plt

        steps, values = zip(*history)
        plt.plot(steps, values, marker="o", label="greedy return (20 episodes)")
        plt.axhline(195, color="grey", linestyle="--", label="target 195")

    MatplotlibRecorder.pretty_plot_wrapper("learning_curve", draw, xlabel="time-step", ylabel="return", title=title)


def main(argv=None) -> float:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    # --- RLA: configure once -------------------------------------------------------------
    exp_manager.set_hyper_param(**{k: v for k, v in vars(args).items() if k not in ("data_root", "config", "resume")})
    exp_manager.add_record_param(["lr", "seed"])
    exp_manager.configure(TASK, rla_config=args.config, data_root=args.data_root, run_file=__file__)
    exp_manager.log_files_gen()
    exp_manager.print_args()
    exp_manager.new_saver(max_to_keep=3)

    env = gym.make(args.env_id)
    agent = DQNAgent(env.observation_space.shape[0], env.action_space.n,
                     DQNConfig(lr=args.lr, hidden=args.hidden, batch_size=args.batch_size,
                               target_update=args.target_update, eps_decay_steps=args.eps_decay_steps))
    buffer = make_buffer(args)
    rng = np.random.default_rng(args.seed)
    start, episodes, best, history = 0, 0, -np.inf, []

    # --- RLA: resume (the 3-line change) -----------------------------------------------------
    if args.resume:
        loader = ExperimentLoader()
        loader.config(TASK, args.resume, args.data_root)
        loader.fork_log_files()
        start, state, variables = loader.load_from_record_date(variable_list=["episodes", "best", "history"])
        agent.load_state_dict(state)
        episodes, best, history = variables["episodes"], variables["best"], [tuple(h) for h in variables["history"]]
        buffer = exp_manager.load_replay_buffer(buffer, step=start, replay_dir=loader.layout.replay_dir)
        rng = np.random.default_rng([args.seed, start])
        logger.info(f"resumed from {args.resume} at step {start}: {len(buffer)} transitions, "
                    f"buffer digest {buffer_digest(buffer)}")

    obs, _ = env.reset(seed=args.seed + start)
    returns, episode_return = deque(maxlen=20), 0.0
    loss = float("nan")
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
        if step >= args.learning_starts:
            batch, _, _ = buffer.sample(args.batch_size)
            loss = agent.update(batch)

        done_step = step + 1
        time_step_holder.set_time(done_step)
        evaluate_now = done_step % args.eval_interval == 0
        if evaluate_now:
            score = evaluate(agent, args.env_id, args.eval_episodes, seed=10_000 + done_step)
            history.append((done_step, score))
            logger.record_tabular("eval/return", score)
            if score > best:
                best = score
                exp_manager.save_checkpoint(model_dict=agent.state_dict(), name="best")
        if evaluate_now or done_step % args.log_interval == 0:  # one row per logged step
            logger.record_tabular("train/episode_return", float(np.mean(returns)) if returns else float("nan"))
            logger.record_tabular("train/loss", loss)
            logger.record_tabular("train/epsilon", agent.epsilon(step))
            logger.record_tabular("train/episodes", episodes)
            logger.dump_tabular()
        if done_step % args.figure_interval == 0 and history:
            plot_curve(history, f"{args.env_id} lr={args.lr} seed={args.seed}")
        if done_step % args.checkpoint_interval == 0:
            exp_manager.save_checkpoint(model_dict=agent.state_dict(),
                                        related_variable={"episodes": episodes, "best": best, "history": history})
            exp_manager.save_replay_buffer(buffer, step=done_step)
            logger.info(f"checkpoint at step {done_step}: buffer digest {buffer_digest(buffer)}")
            exp_manager.sync_log_file(skip_error=True)
        if args.stop_at_target and history and history[-1][1] >= args.target_return:
            logger.info(f"target return {args.target_return} reached at step {done_step}")
            break

    if history:
        plot_curve(history, f"{args.env_id} lr={args.lr} seed={args.seed}")
    env.close()
    buffer.close()
    logger.info(f"best greedy return {best:.1f}; run {exp_manager.index}")
    exp_manager.finish()
    return float(best)


if __name__ == "__main__":
    main()
