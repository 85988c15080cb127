"""The simplest RLA project: configure once, log a few thousand steps, save a figure.

Run it from anywhere:  python example/simplest_code/main.py [--steps N] [--data-root DIR]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from RLA import MatplotlibRecorder, exp_manager, logger, time_step_holder  # noqa: E402
from project.agent import BanditAgent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-id", default="Bandit-10")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--data-root", default=HERE)
    args = parser.parse_args()

    # 1. Configure the run once: hyper-parameters, the ones that name the run, the database.
    exp_manager.set_hyper_param(**{k: v for k, v in vars(args).items() if k != "data_root"})
    exp_manager.add_record_param(["env_id", "lr", "seed"])
    exp_manager.configure("demo_task", rla_config=os.path.join(HERE, "rla_config.yaml"),
                          data_root=args.data_root, run_file=__file__)
    exp_manager.set_total_steps(args.steps)  # stdout's progress line shows the ETA
    exp_manager.log_files_gen()
    exp_manager.print_args()

    # 2. Train and log scalars against the time-step.
    rng = np.random.default_rng(args.seed)
    true_values = rng.normal(0.0, 1.0, size=10)
    agent = BanditAgent(10, args.epsilon, args.lr, rng)
    rewards = []
    for step in range(args.steps):
        time_step_holder.set_time(step)
        arm = agent.act()
        reward = float(rng.normal(true_values[arm], 1.0))
        error = agent.learn(arm, reward)
        rewards.append(reward)
        logger.ma_record_tabular("reward_ma", reward, 100)
        logger.record_tabular("reward", reward)
        logger.record_tabular("td_error", error)
        logger.record_tabular("optimal_arm", float(arm == int(np.argmax(true_values))))
        if step % 10 == 0:
            logger.dump_tabular()

    # 3. A figure into results/ (named "<time-step>-<name>.png").
    def plot_rewards() -> None:
        import matplotlib.pyplot as plt

        window = 100
        smooth = np.convolve(rewards, np.ones(window) / window, mode="valid")
        plt.plot(np.arange(len(smooth)) + window, smooth, label=f"reward (mean of {window})")

    MatplotlibRecorder.pretty_plot_wrapper("reward_curve", plot_rewards, xlabel="time-step",
                                           ylabel="reward", title=f"{args.env_id} lr={args.lr}")
    logger.info(f"run {exp_manager.index} is in {args.data_root}")
    exp_manager.finish()


if __name__ == "__main__":
    main()
