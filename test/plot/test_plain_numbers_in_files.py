"""Every CSV and JSON RLA writes holds plain numbers (issue #18 item 5).

``demo-final.csv`` held ``np.float64(0.3426...)`` in its ``stderr`` column, so pandas read the
column as text. Each file below is read back by pandas / json and every number must be a number.
"""
from __future__ import annotations

import datetime as dt
import decimal
import fractions
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from RLA.fs import json_default, plain
from RLA.plot import plot_func
from RLA.query.testing import make_run

FINAL_COLUMNS = ["n", "mean", "median", "iqm", "std", "stderr", "ci_low", "ci_high", "window_start"]


@pytest.mark.parametrize("value, expected", [
    (np.float64(0.25), 0.25), (np.float32(0.5), 0.5), (np.int64(3), 3), (np.uint8(7), 7), (np.bool_(True), True),
    (np.array(1.5), 1.5), (np.array([2.5]), 2.5), (np.array([[4]]), 4), (decimal.Decimal("0.125"), 0.125),
    (fractions.Fraction(1, 4), 0.25), (1.0, 1.0), ("x", "x"), (None, None)])
def test_plain_turns_scalars_into_python_numbers(value, expected):
    out = plain(value)
    assert out == expected and type(out) is type(expected)


def test_plain_keeps_arrays_and_objects():
    arr = np.array([1.0, 2.0])
    assert plain(arr) is arr
    obj = object()
    assert plain(obj) is obj


def test_plain_turns_torch_scalars_into_numbers():
    torch = pytest.importorskip("torch")
    assert plain(torch.tensor(0.5)) == 0.5 and type(plain(torch.tensor([3]))) is int
    many = torch.tensor([1.0, 2.0])
    assert plain(many) is many


def test_json_default_writes_numbers_and_dates():
    text = json.dumps({"d": decimal.Decimal("0.5"), "f": np.float32(0.5), "when": dt.date(2026, 11, 25)},
                      default=json_default)
    assert json.loads(text) == {"d": 0.5, "f": 0.5, "when": "2026-11-25"}


@pytest.mark.timeout(120)
def test_plot_csvs_read_as_numbers(tmp_path):
    root = tmp_path / "d"
    for seed, values in enumerate([[0.1, 0.2, 0.3], [0.3, 0.5, 0.9], [0.2, 0.1, 0.4]]):
        make_run(root, task="t", params={"algo": "a", "seed": seed}, curves={"r": values}, steps=[0, 1, 2])
    plot_func(root, "t", ["*"], ["algo"], ["r"], band_kind="ci", save_dir=tmp_path, save_name="demo",
              verbose=False)
    curves = pd.read_csv(tmp_path / "demo.csv")
    for column in ("n_runs", "x", "center", "low", "high", "n_at_x"):
        assert pd.api.types.is_numeric_dtype(curves[column]), (column, curves[column].head())
    final = pd.read_csv(tmp_path / "demo-final.csv")
    for column in FINAL_COLUMNS:
        assert pd.api.types.is_numeric_dtype(final[column]), (column, final[column].tolist())
    assert pd.api.types.is_integer_dtype(final["n"]) and final["n"].tolist() == [3]
    text = (tmp_path / "demo-final.csv").read_text()
    assert "np." not in text and "float64" not in text


@pytest.fixture
def numpy_run(tmp_path):
    """A run whose hyper-parameters and logged values are numpy/torch scalars."""
    torch = pytest.importorskip("torch")
    from RLA.easy_log import logger
    from RLA.logger.time_step import time_step_holder
    from RLA.manager.experiment import ExperimentManager

    manager = ExperimentManager()
    manager.set_hyper_param(lr=np.float32(0.001), seed=np.int64(3), gamma=np.float64(0.99), flag=np.bool_(True),
                            clip=torch.tensor(0.5), frac=decimal.Decimal("0.25"))
    manager.configure("t", rla_config={"LOG_USED": ["csv", "json"], "DL_FRAMEWORK": "none"},
                      data_root=str(tmp_path / "data"), run_file=[], code_root=str(tmp_path))
    layout = manager.log_files_gen()
    manager.print_args()
    for step in range(3):
        time_step_holder.set_time(step)
        logger.record_tabular("f64", np.float64(0.1 * step))
        logger.record_tabular("f32", np.float32(0.5))
        logger.record_tabular("i64", np.int64(step))
        logger.record_tabular("zero_d", np.array(1.5))
        logger.record_tabular("one", np.array([2.5]))
        logger.record_tabular("t0", torch.tensor(0.25))
        logger.record_tabular("t1", torch.tensor([0.75]))
        logger.dump_tabular()
    manager.finish()
    time_step_holder.set_time(0)
    return layout


NUMERIC_HPS = {"lr", "seed", "gamma", "clip", "frac"}
LOGGED = ("f64", "f32", "i64", "zero_d", "one", "t0", "t1")


@pytest.mark.timeout(120)
def test_progress_csv_with_numpy_values_reads_as_numbers(numpy_run):
    frame = pd.read_csv(numpy_run.log_dir / "progress.csv")
    for column in LOGGED:
        assert pd.api.types.is_numeric_dtype(frame[column]), (column, frame[column].tolist())
    assert frame["one"].tolist() == [2.5] * 3 and frame["t1"].tolist() == [0.75] * 3
    rows = [json.loads(line) for line in (numpy_run.log_dir / "progress.json").read_text().splitlines()]
    assert all(isinstance(row[c], (int, float)) for row in rows for c in LOGGED)


@pytest.mark.timeout(120)
def test_run_json_and_parameter_json_hold_json_numbers(numpy_run):
    for path, key in ((numpy_run.run_info_file, "hyper_params"), (numpy_run.code_dir / "parameter.json", None),
                      (numpy_run.archive_tester_file, "hyper_param")):
        data = json.loads(Path(path).read_text())
        params = data[key] if key else data
        for name in NUMERIC_HPS:
            assert type(params[name]) in (int, float), (path.name, name, params[name])
        assert params["flag"] is True
    assert json.loads(numpy_run.run_info_file.read_text())["hyper_params"]["seed"] == 3
