"""submitit's local executor: a preempted job is requeued and resumes the same RLA run exactly.

The job's step 10 waits (bounded) until the test has sent submitit's preemption signal
(SIGUSR2, which SLURM sends before a timeout or a preemption) to the task process, so the
signal always arrives inside a step; the checkpoint must still hold the state of a completed
step, and the requeued process must continue at the next one.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pandas as pd
import pytest

submitit = pytest.importorskip("submitit")

from RLA.integrations.submitit_job import RLAJob  # noqa: E402
from RLA.replay_buffer.run_snapshots import load_run_buffer  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import _submitit_trial  # noqa: E402

STEPS = 30
pytestmark = pytest.mark.timeout(180)


def _wait(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _preempt(pid: int) -> None:
    """Send submitit's preemption signal to the job's task process (as SLURM does).

    ``LocalJob._interrupt()`` signals the local controller, which does not forward SIGUSR2.
    """
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert b"submitit" in cmdline, cmdline  # the task process this test started
    os.kill(pid, signal.SIGUSR2)


@pytest.fixture(scope="module")
def preempted(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    import cloudpickle

    cloudpickle.register_pickle_by_value(_submitit_trial)
    base = tmp_path_factory.mktemp("submitit")
    handshake = base / "handshake"
    handshake.mkdir()
    executor = submitit.LocalExecutor(folder=str(base / "jobs"))
    executor.update_parameters(timeout_min=3)
    job = executor.submit(RLAJob(_submitit_trial.train, task="slurm_job",
                                 rla_config={"LOG_USED": ["csv", "log"], "DL_FRAMEWORK": "none"},
                                 data_root=base / "data", tracked_keys=["seed"],
                                 hyper_params={"seed": 3, "steps": STEPS, "handshake": str(handshake)}))
    try:
        _wait(lambda: (handshake / "in_step").exists() or job.done(), 90, "step 10")
        _preempt(int((handshake / "in_step").read_text()))
        (handshake / "signalled").touch()
        _wait(job.done, 120, "the requeued job")
        result = job.result()
    finally:
        if not job.done():
            job.cancel()
    info_file, = (base / "data" / "log" / "slurm_job").rglob("run.json")
    return {"result": result, "info": json.loads(info_file.read_text()), "log_dir": info_file.parent,
            "root": base / "data"}


def test_the_requeued_job_is_the_same_run(preempted: Dict[str, Any]) -> None:
    info = preempted["info"]
    assert info["status"] == "finished" and info["exit_code"] == 0
    restart, = info["restarts"]
    assert restart["previous_status"] == "killed" and restart["reason"] == "requeued by submitit"
    assert restart["step"] == _submitit_trial.SIGNAL_STEP
    assert info["tracked_keys"] == ["seed"] and info["name"].endswith("&seed=3")


def test_steps_continue_without_duplicate_or_gap(preempted: Dict[str, Any]) -> None:
    frame = pd.read_csv(preempted["log_dir"] / "progress.csv")
    assert frame["time-step"].astype(int).tolist() == list(range(STEPS))
    assert frame["w"].tolist() == [2.0 * (s + 1) for s in range(STEPS)]  # no half step saved
    assert preempted["result"]["final_w"] == 2.0 * STEPS


def test_the_restored_buffer_is_the_snapshot(preempted: Dict[str, Any]) -> None:
    result = preempted["result"]
    step = result["restored_step"]
    assert step == _submitit_trial.SIGNAL_STEP
    replay_dir = Path(str(preempted["log_dir"]).replace("/log/", "/replay/"))
    snapshot = load_run_buffer(None, replay_dir, step=step)
    assert _submitit_trial.digest(snapshot) == result["restored_digest"]
    assert len(snapshot) == step + 1


def test_the_resumed_run_equals_an_uninterrupted_one(preempted: Dict[str, Any], tmp_path: Path) -> None:
    """Same rows (w, numpy's global RNG draws restored with the checkpoint) and same buffer."""
    handshake = tmp_path / "handshake"
    handshake.mkdir()
    (handshake / "signalled").touch()  # no wait in step 10
    job = RLAJob(_submitit_trial.train, task="reference", rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"},
                 data_root=preempted["root"], tracked_keys=["seed"],
                 hyper_params={"seed": 3, "steps": STEPS, "handshake": str(handshake)})
    result = job()
    info_file, = (preempted["root"] / "log" / "reference").rglob("run.json")
    reference = pd.read_csv(info_file.parent / "progress.csv")
    resumed = pd.read_csv(preempted["log_dir"] / "progress.csv")
    assert resumed["draw"].tolist() == reference["draw"].tolist()
    assert resumed["w"].tolist() == reference["w"].tolist()
    assert preempted["result"]["digest"] == result["digest"]
