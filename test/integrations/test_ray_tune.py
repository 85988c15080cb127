"""Ray Tune on a real local cluster: 4 trials are 4 RLA runs with the statuses of their trials.

One sweep (lr x seed, 8 steps, a checkpoint every 2 steps) runs once per module:
* (lr 0.2, seed 1) is stopped at iteration 3 by a scheduler -> killed;
* (lr 0.1, seed 1) raises at step 6 once; Tune retries it (max_failures=1) from its step-4
  checkpoint -> the same run, rows 5.. dropped then written again, finished;
* the two others finish.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

ray = pytest.importorskip("ray")
tune = pytest.importorskip("ray.tune")

from RLA.integrations import ray_tune as rla_tune  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import _tune_trial  # noqa: E402

TASK = "tune_sweep"
pytestmark = pytest.mark.timeout(240)


class StopOneTrial(tune.schedulers.FIFOScheduler):
    """A scheduler that stops the (lr 0.2, seed 1) trial after its 3rd result."""

    def on_trial_result(self, tune_controller: Any, trial: Any, result: Dict[str, Any]) -> str:
        if trial.config["lr"] == 0.2 and trial.config["seed"] == 1 and result["training_iteration"] >= 3:
            return self.STOP
        return self.CONTINUE


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    base = tmp_path_factory.mktemp("tune")
    ray.cloudpickle.register_pickle_by_value(_tune_trial)
    # Loopback only, and no usage report to Ray's servers (tests send no traffic off this machine).
    saved = os.environ.get("RAY_USAGE_STATS_ENABLED")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        space = {"lr": tune.grid_search([0.1, 0.2]), "seed": tune.grid_search([0, 1]),
                 "fail_marker": str(base / "failed-once")}
        trainable = rla_tune.trainable(_tune_trial.train, task=TASK, param_space=space,
                                       rla_config={"LOG_USED": ["csv", "log"], "DL_FRAMEWORK": "none"},
                                       data_root=base / "data")
        tuner = tune.Tuner(trainable, param_space=space,
                           tune_config=tune.TuneConfig(scheduler=StopOneTrial()),
                           run_config=tune.RunConfig(storage_path=str(base / "ray"), verbose=0,
                                                     failure_config=tune.FailureConfig(max_failures=1)))
        results = tuner.fit()
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("RAY_USAGE_STATS_ENABLED", None)
        else:
            os.environ["RAY_USAGE_STATS_ENABLED"] = saved
    return {"root": base / "data", "results": results}


def _runs(root: Path) -> Dict[tuple, Dict[str, Any]]:
    runs = {}
    for info_file in sorted((root / "log" / TASK).rglob("run.json")):
        info = json.loads(info_file.read_text())
        params = info["hyper_params"]
        runs[(params["lr"], params["seed"])] = dict(info, log_dir=info_file.parent)
    return runs


def _steps(run: Dict[str, Any]) -> List[int]:
    return pd.read_csv(run["log_dir"] / "progress.csv")["time-step"].astype(int).tolist()


def test_each_trial_is_one_run_named_by_the_searched_keys(sweep: Dict[str, Any]) -> None:
    runs = _runs(sweep["root"])
    assert sorted(runs) == [(0.1, 0), (0.1, 1), (0.2, 0), (0.2, 1)]
    assert len(list((sweep["root"] / "log" / TASK).rglob("run.json"))) == 4  # a retry is no new run
    for (lr, seed), run in runs.items():
        assert run["tracked_keys"] == ["lr", "seed"]
        assert run["name"].endswith(f"&lr={lr}&seed={seed}")
        assert run["tune"]["trial_id"] and run["tune"]["experiment"]


def test_statuses_follow_the_trials(sweep: Dict[str, Any]) -> None:
    runs = _runs(sweep["root"])
    assert runs[(0.2, 1)]["status"] == "killed"
    assert "stopped by Ray Tune" in runs[(0.2, 1)]["error"]
    for key in [(0.1, 0), (0.2, 0), (0.1, 1)]:
        assert runs[key]["status"] == "finished", (key, runs[key]["status"], runs[key]["error"])
    assert _steps(runs[(0.2, 1)]) == [1, 2, 3]


def test_a_retried_trial_continues_the_same_run_without_duplicate_steps(sweep: Dict[str, Any]) -> None:
    run = _runs(sweep["root"])[(0.1, 1)]
    assert _steps(run) == list(range(1, _tune_trial.STEPS + 1))
    restart, = run["restarts"]
    assert restart["previous_status"] == "crashed" and restart["step"] == 4 and restart["rows_kept"] == 4
    frame = pd.read_csv(run["log_dir"] / "progress.csv")
    assert frame["score"].tolist() == pytest.approx([0.2 * s for s in range(1, 9)])  # w restored at step 4
    assert "restored by Ray Tune" in (run["log_dir"] / "log.txt").read_text()


def test_the_tune_checkpoint_is_the_rla_checkpoint(sweep: Dict[str, Any]) -> None:
    result = sweep["results"].get_best_result(metric="score", mode="max", filter_nan_and_inf=False)
    with result.checkpoint.as_directory() as folder:
        reference = json.loads((Path(folder) / rla_tune.REFERENCE).read_text())
        assert (Path(folder) / reference["file"]).is_file()
    run = _runs(sweep["root"])[(result.config["lr"], result.config["seed"])]
    assert reference["run"].endswith(run["name"]) and reference["step"] == 8
    assert (Path(str(run["log_dir"]).replace("/log/", "/checkpoint/")) / reference["file"]).is_file()


def test_rla_list_and_plot_see_the_sweep(sweep: Dict[str, Any], capsys: pytest.CaptureFixture,
                                         tmp_path: Path) -> None:
    from rla_scripts.cli import main

    root = str(sweep["root"])
    assert main(["list", "--data-root", root, "--task", TASK, "--columns", "status,lr,seed",
                 "--format", "csv"]) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert len(table) == 4
    assert sorted(table["status"]) == ["finished", "finished", "finished", "killed"]
    assert main(["plot", "--data-root", root, "--task", TASK, "--metrics", "score", "--split-keys", "lr",
                 "--resample", "0", "--out", str(tmp_path / "sweep.png")]) == 0
    out = capsys.readouterr().out
    assert "lr=0.1 (2 runs)" in out and "lr=0.2 (2 runs)" in out
