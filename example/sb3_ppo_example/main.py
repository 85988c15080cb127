"""PPO (Stable-Baselines3) on CartPole logging into RLA, with checkpoints and resume.

    python main.py                      # a new run
    python main.py --loaded_date <YYYY/MM/DD/HH-MM-SS-ffffff>   # resume that run
"""
from __future__ import annotations

import argparse
import os

import gymnasium as gym
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback

from RLA.easy_log.exp_loader import arg_parser_postprocess, exp_loader
from RLA.easy_log.tester import exp_manager
from RLA.easy_log.time_step import time_step_holder
from RLA.integrations.sb3 import configure_sb3_logger

HERE = os.path.dirname(os.path.abspath(__file__))


class SaveEvery(BaseCallback):
    """Save the policy (and optimizer) through exp_manager every ``every`` environment steps."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every == 0:
            time_step_holder.set_time(self.num_timesteps)  # the checkpoint's step = SB3's timesteps
            exp_manager.save_checkpoint({"policy": self.model.policy.state_dict(),
                                         "optim": self.model.policy.optimizer.state_dict()})
        return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env_id", default="CartPole-v1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--total_timesteps", type=int, default=4096)
    parser.add_argument("--data_root", default=os.path.join(HERE, "data"))
    arg_parser_postprocess(parser)
    args = parser.parse_args()

    exp_manager.set_hyper_param(**vars(args))
    exp_manager.add_record_param(["env_id", "seed"])
    exp_manager.configure("sb3_ppo", rla_config=os.path.join(HERE, "rla_config.yaml"), data_root=args.data_root)
    # A resume trains with the killed run's settings (and records them): list in
    # hp_to_overwrite what this command line may change. Without --loaded_date: unchanged.
    args = exp_loader.import_hyper_parameters(hp_to_overwrite=["data_root"])
    exp_manager.set_hyper_param(**vars(args))
    exp_manager.log_files_gen()
    exp_manager.print_args()
    exp_manager.new_saver(max_to_keep=3)

    model = PPO("MlpPolicy", gym.make(args.env_id), n_steps=512, batch_size=64, seed=args.seed, verbose=0)
    model.set_logger(configure_sb3_logger())  # SB3's scalars go to progress.csv / TensorBoard of this run

    exp_loader.fork_log_files()                                 # resume (no-op without --loaded_date)
    start, ckpt, _ = exp_loader.load_from_record_date()
    if ckpt:
        model.policy.load_state_dict(ckpt["policy"])
        model.policy.optimizer.load_state_dict(ckpt["optim"])
        model.num_timesteps = start

    model.learn(total_timesteps=args.total_timesteps - (start if ckpt else 0), callback=SaveEvery(1024),
                reset_num_timesteps=not ckpt)
    print(f"run {exp_manager.index}: logs in {exp_manager.log_dir}")


if __name__ == "__main__":
    main()
