"""The peers bench copies exactly RLA's runs: TensorBoard and MLflow read back the same scalars and params."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from RLA.query.testing import make_run

from bench.ui_peers import ratio, spread
from bench.ui_peers_data import read_runs, write_mlflow, write_tensorboard

RUNS = {("bench/Hopper", 0.001, 0): [1.5, -2.25, 3.0], ("charts", 0.01, 1): [0.125, 7.0, 8.5, 9.75]}


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for (task, lr, seed), curve in RUNS.items():
        make_run(root, task=task, params={"lr": lr, "seed": seed}, curves={"return": curve},
                 steps=[k * 100 for k in range(len(curve))])
    return root


def _expected() -> dict:
    return {(task, lr, seed): [(k * 100, v) for k, v in enumerate(curve)] for (task, lr, seed), curve in RUNS.items()}


def test_tensorboard_copy_reads_back_the_same_runs_and_scalars(tmp_path: Path):
    pytest.importorskip("tensorboardX")
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    root = _root(tmp_path)
    _seconds, count = write_tensorboard(root, tmp_path / "tb")
    assert count == len(RUNS)
    found = {}
    for rel, params, _steps, _values in read_runs(root):
        acc = event_accumulator.EventAccumulator(str(tmp_path / "tb" / rel))
        acc.Reload()
        found[(params["task"], params["lr"], params["seed"])] = [(e.step, e.value) for e in acc.Scalars("return")]
        assert rel.startswith(params["task"] + "/")  # the run filter 'charts' selects by task
    assert found == _expected()


def test_mlflow_copy_reads_back_the_same_runs_params_and_metrics(tmp_path: Path):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    root = _root(tmp_path)
    seconds, count = write_mlflow(root, tmp_path / "mlflow.db", budget_s=600, expected=len(RUNS))
    assert count == len(RUNS) and seconds is not None
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.get_experiment_by_name("bench")
    found = {}
    for run in client.search_runs([exp.experiment_id]):
        p = run.data.params
        history = client.get_metric_history(run.info.run_id, "return")
        key = (run.data.tags["task"], float(p["lr"]), int(p["seed"]))
        found[key] = sorted((m.step, m.value) for m in history)
        assert run.info.status == "FINISHED"
    assert found == _expected()


def test_mlflow_copy_stops_when_the_budget_would_be_exceeded(tmp_path: Path):
    pytest.importorskip("mlflow")
    root = _root(tmp_path)
    seconds, count = write_mlflow(root, tmp_path / "mlflow.db", budget_s=0.0, expected=len(RUNS))
    assert seconds is None and count == len(RUNS)


def test_spread_and_ratio_report_medians():
    assert spread([3.0, 1.0, 2.0]) == "2.00 s [1.00-3.00] (3)"
    assert spread([]) == "-"
    assert ratio([4.0, 6.0, 5.0], [1.0, 2.0, 3.0]) == "2.5x"
    assert ratio([], [1.0]) == "-"
