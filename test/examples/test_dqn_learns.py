"""example/dqn_cartpole learns CartPole: a short CI-sized run reaches the usual target return."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "example" / "dqn_cartpole" / "main.py"
RANDOM_POLICY_RETURN = 22.0  # mean return of uniform random actions on CartPole-v1


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_dqn_example_reaches_the_cartpole_target_within_a_few_thousand_steps(tmp_path, subprocess_env):
    root = tmp_path / "data"
    result = subprocess.run(
        [sys.executable, str(MAIN), "--seed", "0", "--total-steps", "8000", "--learning-starts", "500",
         "--eps-decay-steps", "4000", "--eval-interval", "1000", "--eval-episodes", "20",
         "--checkpoint-interval", "2000", "--figure-interval", "2000", "--stop-at-target",
         "--data-root", str(root)],
        cwd=tmp_path, env=subprocess_env, capture_output=True, text=True, timeout=190)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "target return 195 reached" in result.stdout, result.stdout[-2000:]

    run = next(p for p in (root / "log" / "dqn_cartpole").glob("*/*/*/*") if p.is_dir())
    evals = pd.read_csv(run / "progress.csv")[["time-step", "eval/return"]].dropna()
    assert evals["eval/return"].iloc[-1] >= 195.0
    assert evals["eval/return"].max() > 5 * RANDOM_POLICY_RETURN
    assert json.loads((run / "run.json").read_text())["status"] == "finished"
    checkpoints = root / "checkpoint" / run.relative_to(root / "log")
    assert (checkpoints / "checkpoint-best.pt").is_file()
    assert list((root / "results").rglob("*-learning_curve.png"))
