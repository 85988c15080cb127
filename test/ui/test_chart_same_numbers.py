"""The charts page's numbers are rla plot's, bit for bit, for every center and band kind:
grouped_curves (batched CSV read, pieces without a frame, numbers encoded for JSON) against
the plot's own stages (load, resample_group, summarize_group) on the same runs."""

from __future__ import annotations

import itertools
from typing import Any, Dict, List

import numpy as np
import pytest

from RLA.plot.stats import AGGREGATES, BANDS


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> List[Any]:
    """3 learning rates x 4 seeds of unequal length (150 to 200 rows), plus a run logging
    text, gaps and inf, with a header of its own."""
    from RLA.query import select_runs
    from RLA.query.testing import make_run

    root = tmp_path_factory.mktemp("chart")
    rng = np.random.default_rng(5)
    for lr, seed in itertools.product((1e-4, 3e-4, 1e-3), range(4)):
        length = 150 + 10 * seed + int(lr * 1e4)
        values = list(np.cumsum(rng.normal(size=length)) * 10.0 ** rng.integers(-3, 4))
        make_run(
            root,
            task="c",
            params={"lr": lr, "seed": seed},
            curves={"return": values},
            steps=[k * 7 + seed for k in range(length)],
        )
    odd = make_run(root, task="c", params={"lr": 1e-3, "seed": 9}, curves={"return": [0.0]})
    (odd.log_dir / "progress.csv").write_bytes(
        b"time-step,return,note\n0,1,a\n5,,b\n9,inf,c\n14,2.5,d\n700,3,e\n"
    )
    return list(select_runs(root, task="c").runs)


def _plot_numbers(
    rows: List[Any], agg: str, band: str, vary_len: bool, points: int = 64, smooth: float = 2.0
) -> List[Dict[str, Any]]:
    from RLA.plot.aggregate import summarize_group
    from RLA.plot.grouping import group_runs
    from RLA.plot.load import load
    from RLA.plot.options import StatOptions
    from RLA.plot.resample import resample_group
    from RLA.ui.encode import jsonable

    curves = load(rows, ["return"]).curves["return"]
    opts = StatOptions(points=points, smooth_step=smooth, agg=agg, band_kind=band, vary_len=vary_len)
    out = []
    for i, group in enumerate(group_runs([rows], ["lr"], "return")):
        data = [curves[r.index] for r in group.runs if r.index in curves]
        curve = summarize_group(group.legend, i, resample_group(data, points, smooth, vary_len), opts).curve
        out.append(
            jsonable({k: getattr(curve, k) for k in ("legend", "n", "x", "center", "low", "high", "n_at_x")})
        )
    return out


def _same_as_plot(runs: List[Any], agg: str, band: str, vary_len: bool, points: int, smooth: float) -> None:
    from RLA.ui.curves import CurveOptions, grouped_curves

    opts = CurveOptions(
        metrics=["return"],
        group_by=["lr"],
        agg=agg,
        band=band,
        smooth=smooth,
        resample=points,
        vary_len=vary_len,
    )
    got = grouped_curves(runs, opts)["metrics"]["return"]
    expected = _plot_numbers(runs, agg, band, vary_len, points, smooth)
    assert [g["legend"] for g in got] == [e["legend"] for e in expected]
    for mine, theirs in zip(got, expected):
        for key, value in theirs.items():
            assert repr(mine[key]) == repr(value), (key, vary_len)


@pytest.mark.parametrize("agg, band", list(itertools.product(AGGREGATES, BANDS)))
def test_chart_numbers_are_rla_plots_bit_for_bit(runs: List[Any], agg: str, band: str) -> None:
    for vary_len in (False, True):
        _same_as_plot(runs, agg, band, vary_len, 64, 2.0)


@pytest.mark.parametrize("points, smooth", [(0, 3.0), (0, 0.0), (17, 0.0)])
def test_grids_of_other_sizes_and_no_smoothing_are_rla_plots_too(
    runs: List[Any], points: int, smooth: float
) -> None:
    # resample=0: each group on the union of its runs' x (grids of different sizes)
    _same_as_plot(runs, "mean", "ci", True, points, smooth)


def test_numeric_arrays_encode_as_their_items_do() -> None:
    from RLA.ui.encode import jsonable

    arrays = [
        np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 5e-324, 1e308, 0.1]),
        np.array([1.5, np.nan], dtype=np.float32),
        np.array([2**63 + 5, 7], dtype=np.uint64),
        np.array([-3, 4]),
        np.array([True, False]),
        np.array([], dtype=float),
    ]
    for array in arrays:
        got = jsonable(array)
        expected = [jsonable(item) for item in array.tolist()]  # one item at a time, as before
        assert repr(got) == repr(expected) and [type(v) for v in got] == [type(v) for v in expected]


def test_the_json_body_is_what_jsonresponse_sends_and_is_encoded_once(runs: List[Any]) -> None:
    from starlette.responses import JSONResponse

    from RLA.ui.curves import CurveOptions, curves_json, grouped_curves

    opts = CurveOptions(metrics=["return"], group_by=["lr"], band="ci", resample=32)
    body = curves_json(runs, opts)
    assert body == JSONResponse(grouped_curves(runs, opts)).body
    assert curves_json(runs, opts) is body  # kept with the chart
    assert curves_json([], opts) == JSONResponse({"x": "time-step", "metrics": {}, "notes": []}).body
