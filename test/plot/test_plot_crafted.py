"""plot_func next to crafted runs: the good runs are plotted, each bad one is skipped and reported."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from RLA.plot import plot_func
from RLA.query import BrokenRunWarning
from RLA.query.testing import CRAFTED, make_crafted_runs, make_run


@pytest.mark.timeout(180)
def test_plot_func_plots_the_good_runs_and_reports_each_crafted_one(tmp_path):
    root = tmp_path / "data"
    good, bad = make_crafted_runs(root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = plot_func(root, "crafted", ["*"], ["kind"], ["return"], save_name="fig.png", verbose=False,
                           resample=16)
    assert result.legends == {"kind=good": len(good)}
    skipped = dict(result.skipped)
    assert set(skipped) == {layout.index for layout in bad.values()}
    for name, layout in bad.items():
        assert CRAFTED[name][1] in skipped[layout.index], name
    assert sum(issubclass(w.category, BrokenRunWarning) for w in caught) == len(bad)
    assert all(path.is_file() for path in result.files)


@pytest.mark.timeout(120)
def test_a_value_that_is_broken_mathtext_does_not_fail_the_figure(tmp_path):
    root = tmp_path / "data"
    make_run(root, task="t", params={"note": "$\\frac{$", "seed": 0}, curves={"r": [1.0, 2.0]})
    make_run(root, task="t", params={"note": "$x^2$", "seed": 0}, curves={"r": [1.0, 2.0]})
    result = plot_func(root, "t", ["*"], ["note"], ["r"], save_name="math.png", verbose=False, resample=8)
    assert set(result.legends) == {"note=$\\frac{$", "note=$x^2$"}
    assert Path(result.files[0]).stat().st_size > 0
