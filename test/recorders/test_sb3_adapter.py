"""The Stable-Baselines3 adapter: model.set_logger(configure_sb3_logger()) logs into the RLA run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

sb3 = pytest.importorskip("stable_baselines3")
gym = pytest.importorskip("gymnasium")

from RLA.logger.time_step import time_step_holder  # noqa: E402


@pytest.fixture
def run(tmp_path):
    from RLA.easy_log.tester import exp_manager

    exp_manager.set_hyper_param(algo="ppo")
    exp_manager.configure("sb3", rla_config={"LOG_USED": ["csv", "tensorboard"], "DL_FRAMEWORK": "torch"},
                          data_root=str(tmp_path / "data"), run_file=[], code_root=str(tmp_path))
    layout = exp_manager.log_files_gen()
    yield layout
    exp_manager.finish()
    time_step_holder.set_time(0)


@pytest.mark.timeout(120)
def test_ppo_scalars_land_in_progress_csv_at_sb3_timesteps(run):
    from stable_baselines3 import PPO

    from RLA.easy_log.tester import exp_manager
    from RLA.integrations.sb3 import configure_sb3_logger

    model = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.set_logger(configure_sb3_logger())
    model.learn(total_timesteps=128)
    exp_manager.finish()
    csv = pd.read_csv(run.log_dir / "progress.csv")
    assert csv["time-step"].tolist() == [64, 128]
    assert {"train/value_loss", "time/fps"} <= set(csv.columns)


@pytest.mark.timeout(60)
def test_media_values_go_to_results(run):
    import matplotlib
    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    import torch
    from stable_baselines3.common.logger import Figure, Image, Video

    from RLA.easy_log.tester import exp_manager
    from RLA.integrations.sb3 import configure_sb3_logger

    sb3_log = configure_sb3_logger()
    fig = plt.figure()
    sb3_log.record("eval/curve", Figure(fig, close=True), exclude=("stdout", "log", "json", "csv"))
    sb3_log.record("eval/frame", Image(np.zeros((8, 8, 3), np.uint8), "HWC"), exclude=("stdout", "log", "json", "csv"))
    sb3_log.record("eval/video", Video(torch.zeros(1, 3, 3, 8, 8, dtype=torch.uint8), fps=5),
                   exclude=("stdout", "log", "json", "csv"))
    sb3_log.record("eval/return", 1.5)
    sb3_log.dump(step=300)
    exp_manager.finish()
    assert sorted(p.name for p in run.results_dir.iterdir()) == [
        "300-eval_curve.png", "300-eval_frame.png", "300-eval_video.gif"]
    assert pd.read_csv(run.log_dir / "progress.csv")["eval/return"].tolist() == [1.5]
