"""``plot_res_func``'s ``y_bound`` and ``remove_outlier`` (the original's ``csv_to_xy``)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from RLA.plot.outliers import ValueFilter
from RLA.query.testing import make_run

TASK = "demo_task"


def _run(root: Path, values: list[float], lr: float, minute: int) -> None:
    make_run(root, TASK, {"learning_rate": lr}, curves={"perf/mse": values}, steps=list(range(len(values))),
             when=dt.datetime(2022, 3, 1, 21, minute, 0), style="original", ip="11.0.91.89")


def _center(root: Path, **options) -> dict[str, np.ndarray]:
    """Mean curve per legend of ``plot_res_func`` over the runs of 2022/03/01 (no resampling)."""
    from RLA.easy_plot.plot_func import plot_res_func
    g2lf, _ = plot_res_func(prefix_dir=str(root / "log" / TASK), regs=["2022/03/01/21-*"],
                            param_keys=["learning_rate"], value_keys=["perf/mse"], resample=0,
                            smooth_step=0, verbose=False, save_name="o.png", **options)
    return {key[:-3]: np.asarray(value[1]) for key, value in g2lf["perf/mse"].items() if key.endswith("-se")}


@pytest.fixture
def spiked(tmp_path: Path) -> Path:
    """One run of 200 rows near 1.0 with a spike of 1e6 at step 100 (z-score ~14)."""
    values = [1.0 + 0.01 * (i % 7) for i in range(200)]
    values[100] = 1e6
    _run(tmp_path, values, 0.01, 10)
    return tmp_path


def test_remove_outlier_drops_the_spike(spiked: Path):
    assert _center(spiked)["learning_rate=0.01"].max() == pytest.approx(1e6)
    cleaned = _center(spiked, remove_outlier=True)["learning_rate=0.01"]
    assert cleaned.max() < 1.1 and cleaned.size == 199  # the spike's row is gone, as in the original


def test_remove_outlier_keeps_a_constant_run(tmp_path: Path):
    """The original's z-score was NaN (std 0) and dropped every row; the run stays whole."""
    _run(tmp_path, [3.0] * 50, 0.001, 11)
    center = _center(tmp_path, remove_outlier=True)["learning_rate=0.001"]
    assert center.size == 50 and np.all(center == 3.0)


def test_y_bound_clips_each_run(spiked: Path):
    center = _center(spiked, y_bound=1.02)["learning_rate=0.01"]
    assert center.max() == pytest.approx(1.02) and center.min() == pytest.approx(1.0)


def test_value_filter_clips_before_the_z_score_and_is_one_sided():
    x = np.arange(200.0)
    y = np.ones(200) + 0.01 * (x % 7)
    y[5], y[6] = 1e6, -1e6
    fx, fy = ValueFilter(remove_outlier=True)(x, y)
    assert 5 in fx and 6 in fx  # two opposite spikes: neither reaches z 10
    y[6] = 1.0
    fx, fy = ValueFilter(remove_outlier=True)(x, y)
    assert 5 not in fx and fx.size == 199 and fy.max() < 1.1
    y[6] = -1e6
    fx, _ = ValueFilter(y_bound=2.0, remove_outlier=True)(x, y)
    assert 6 in fx and 5 in fx  # clipped first: the high spike is 2.0, the low one is never dropped
    fx, _ = ValueFilter()(x, y)
    assert fx.size == 200 and not ValueFilter().active


def test_value_filter_uses_the_sample_std_like_pandas():
    """102 rows: 0, a spike of 1.0 and 0.0173 -> z 9.9990 with pandas' std (kept), 10.048 with ddof 0."""
    y = np.zeros(102)
    y[0], y[1] = 1.0, 0.0173
    fx, _ = ValueFilter(remove_outlier=True)(np.arange(102.0), y)
    assert fx.size == 102
