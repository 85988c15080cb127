"""example/dqn_cartpole: a training process killed with SIGKILL resumes from its checkpoint
and replay snapshot; the continued curve has no duplicated, missing or backward steps and the
restored buffer is the snapshot's."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "example" / "dqn_cartpole" / "main.py"
TOTAL, LOG_EVERY = 4000, 100
SMALL = ["--total-steps", str(TOTAL), "--checkpoint-interval", "1000", "--learning-starts", "200",
         "--eval-interval", "1000", "--eval-episodes", "2", "--log-interval", str(LOG_EVERY),
         "--buffer-size", "5000", "--quiet"]
CHECKPOINT_LINE = re.compile(r"checkpoint at step (\d+): buffer digest (\w+)")
RESUME_LINE = re.compile(r"resumed from (\S+) at step (\d+): (\d+) transitions, buffer digest (\w+)")


def _example_main():
    """The example's module (for its buffer_digest), loaded under a unique name."""
    spec = importlib.util.spec_from_file_location("dqn_cartpole_main", MAIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_dirs(root: Path) -> list:
    return sorted(p for p in (root / "log" / "dqn_cartpole").glob("*/*/*/*") if p.is_dir())


def _wait_for(predicate, proc: subprocess.Popen, deadline: float, what: str, stderr: Path):
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        if proc.poll() is not None:
            pytest.fail(f"training exited ({proc.returncode}) before {what}:\n{stderr.read_text()[-3000:]}")
        time.sleep(0.05)
    proc.kill()
    proc.wait(10)
    pytest.fail(f"timed out waiting for {what}:\n{stderr.read_text()[-3000:]}")


def _checkpoints(log_txt: Path) -> dict:
    text = log_txt.read_text() if log_txt.is_file() else ""
    return {int(step): digest for step, digest in CHECKPOINT_LINE.findall(text)}


def _last_step(progress: Path) -> int:
    if not progress.is_file() or progress.stat().st_size == 0:
        return 0
    steps = pd.read_csv(progress)["time-step"]
    return int(steps.max()) if len(steps) else 0


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_sigkilled_dqn_run_resumes_with_a_continuous_curve_and_the_snapshot_buffer(tmp_path, subprocess_env):
    from RLA.layout import find_run
    from RLA.manager.run_info import effective_status
    from RLA.replay_buffer.run_snapshots import load_run_buffer

    root = tmp_path / "data"
    stderr = tmp_path / "killed.stderr"
    with stderr.open("w") as err:
        proc = subprocess.Popen([sys.executable, str(MAIN), *SMALL, "--data-root", str(root)], cwd=tmp_path,
                                env=subprocess_env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 150
        run = _wait_for(lambda: (_run_dirs(root) or [None])[0], proc, deadline, "the run's folder", stderr)
        _wait_for(lambda: 2000 in _checkpoints(run / "log.txt"), proc, deadline, "the checkpoint at step 2000",
                  stderr)
        # Let a few rows past the checkpoint reach progress.csv: the resume must drop them.
        _wait_for(lambda: _last_step(run / "progress.csv") >= 2200, proc, deadline, "rows after step 2000",
                  stderr)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)

    killed = json.loads((run / "run.json").read_text())
    assert effective_status(killed) == "crashed"
    killed_checkpoints = _checkpoints(run / "log.txt")

    # Only the index on the command line: the killed run's hyper-parameters are reused.
    resumed = subprocess.run([sys.executable, str(MAIN), "--resume", killed["index"], "--data-root", str(root)],
                             cwd=tmp_path, env=subprocess_env, capture_output=True, text=True, timeout=150)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    match = RESUME_LINE.search(resumed.stdout)
    assert match, resumed.stdout[-3000:]
    parent, step, size, digest = match[1], int(match[2]), int(match[3]), match[4]
    assert parent == killed["index"] and step in killed_checkpoints and step >= 2000 and size == step

    new_run = [r for r in _run_dirs(root) if r != run]
    assert len(new_run) == 1
    info = json.loads((new_run[0] / "run.json").read_text())
    assert info["parent"] == killed["index"] and info["status"] == "finished"
    assert info["hyper_params"]["total_steps"] == TOTAL and info["hyper_params"]["buffer_size"] == 5000

    steps = pd.read_csv(new_run[0] / "progress.csv")["time-step"].tolist()
    assert steps == list(range(LOG_EVERY, TOTAL + 1, LOG_EVERY))

    # The buffer the resumed process restored is the killed run's snapshot of that step.
    snapshot = load_run_buffer(None, find_run(root, killed["index"]).replay_dir, step=step)
    try:
        assert len(snapshot) == step
        assert _example_main().buffer_digest(snapshot) == digest == killed_checkpoints[step]
    finally:
        snapshot.close()
