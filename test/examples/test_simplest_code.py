"""example/simplest_code runs end to end and fills a database."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "example" / "simplest_code"


@pytest.mark.timeout(180)
def test_simplest_example_populates_the_database(tmp_path, subprocess_env):
    result = subprocess.run([sys.executable, str(EXAMPLE / "main.py"), "--steps", "600", "--data-root", str(tmp_path)],
                            cwd=tmp_path, env=subprocess_env, capture_output=True, text=True, timeout=170)
    assert result.returncode == 0, result.stderr[-3000:]
    log_dirs = [p for p in (tmp_path / "log" / "demo_task").glob("*/*/*/*") if p.is_dir()]
    assert len(log_dirs) == 1 and log_dirs[0].name.endswith("&env_id=Bandit-10&lr=0.1&seed=0")
    run = log_dirs[0]
    progress = pd.read_csv(run / "progress.csv")
    assert len(progress) == 60 and {"reward", "td_error", "time-step", "timestamp"} <= set(progress.columns)
    assert progress["reward_ma"].notna().sum() > 0  # moving average emitted once its window is full
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished" and info["hyper_params"]["steps"] == 600
    code = tmp_path / "code" / "demo_task" / run.relative_to(tmp_path / "log" / "demo_task")
    assert (code / "project" / "agent.py").is_file() and (code / "main.py").is_file()
    assert json.loads((code / "parameter.json").read_text())["lr"] == 0.1
    figures = list((tmp_path / "results" / "demo_task").rglob("*reward_curve.png"))
    assert len(figures) == 1 and figures[0].stat().st_size > 1000
    assert list((run / "tb").rglob("events.out.tfevents.*"))
