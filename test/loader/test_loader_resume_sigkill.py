"""A run SIGKILLed mid-training and resumed from its last checkpoint gives the uninterrupted curve."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from RLA.layout import iter_run_dirs
from RLA.logger.readers import read_tb
from RLA.manager.run_info import effective_status, read_run_info

TRAINER = Path(__file__).with_name("_toy_trainer.py")
STEPS = 40


def run_trainer(data_root: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TRAINER), "--data_root", str(data_root), "--steps", str(STEPS),
                           *extra], env=env, capture_output=True, text=True, timeout=120)


def only_run(data_root: Path):
    runs = list(iter_run_dirs(data_root))
    assert len(runs) == 1
    return runs[0]


@pytest.mark.timeout(240)
def test_killed_then_resumed_run_equals_an_uninterrupted_run(tmp_path, subprocess_env):
    # The reference: one uninterrupted run.
    reference = run_trainer(tmp_path / "ref", subprocess_env)
    assert reference.returncode == 0, reference.stderr
    expected = pd.read_csv(only_run(tmp_path / "ref").log_dir / "progress.csv")

    # A run killed by SIGKILL between two checkpoints (checkpoints every 5 steps).
    data = tmp_path / "data"
    proc = subprocess.Popen([sys.executable, str(TRAINER), "--data_root", str(data), "--steps", str(STEPS),
                             "--sleep", "0.05"], env=subprocess_env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    try:
        for line in proc.stdout:
            if line.startswith("STEP") and int(line.split()[1]) >= 17:
                break
            assert time.monotonic() < deadline
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
    killed = only_run(data)
    killed_csv = pd.read_csv(killed.log_dir / "progress.csv")
    assert 17 <= killed_csv["time-step"].max() < STEPS - 1
    assert effective_status(read_run_info(killed.run_info_file)) == "crashed"

    # Resume it: the same script with --loaded_date.
    resumed = run_trainer(data, subprocess_env, "--loaded_date", killed.record_date)
    assert resumed.returncode == 0, resumed.stderr
    child = next(r for r in iter_run_dirs(data) if r.name != killed.name)
    got = pd.read_csv(child.log_dir / "progress.csv")

    assert got["time-step"].tolist() == list(range(STEPS)), "no duplicated, missing or backward steps"
    pd.testing.assert_series_equal(got["loss"], expected["loss"], check_exact=True)
    pd.testing.assert_series_equal(got["noise"], expected["noise"], check_exact=True)
    tb = read_tb(str(child.log_dir / "tb"))
    resumed_from = read_run_info(child.run_info_file)["resumed_from"]["step"]
    assert tb.index.is_unique and tb.index.is_monotonic_increasing
    assert tb.index.max() == STEPS - 1 and set(range(resumed_from + 1, STEPS)) <= set(tb.index)
    info = read_run_info(child.run_info_file)
    assert info["parent"] == killed.index and info["status"] == "finished"
