"""``rla list --group-by KEY --metrics M``: final statistics over seeds per group, the numbers
of ``rla plot``'s ``-final.csv`` for the same runs and options."""
from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from RLA.plot.stats import final_stats
from RLA.query import select_runs
from RLA.query.groups import STAT_COLUMNS, group_final_frame
from RLA.query.testing import make_run
from rla_scripts.cli import main

pytestmark = pytest.mark.timeout(120)

LRS = (1e-4, 1e-3, 3e-3)


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """3 learning rates x 4 seeds with noisy curves of unequal lengths, a second task, an odd run."""
    root = tmp_path / "data"
    rng = np.random.default_rng(7)
    when = dt.datetime(2026, 11, 20, 8, 0, 0)
    for i, (lr, seed) in enumerate((lr, seed) for lr in LRS for seed in range(4)):
        length = 40 + 7 * seed  # runs of one group end at different steps
        steps = sorted(rng.choice(np.arange(1, 5 * length), size=length, replace=False).tolist())
        values = (np.cumsum(rng.normal(lr * 1e3, 1.0, size=length))).round(6).tolist()
        make_run(root, task="demo", params={"algo": "sac", "lr": lr, "seed": seed}, curves={"return": values},
                 steps=steps, when=when + dt.timedelta(minutes=i))
    make_run(root, task="other", params={"algo": "sac", "lr": 1e-3, "seed": 0}, curves={"return": [1.0, 2.0]},
             when=when - dt.timedelta(days=1))
    return root


def _plot_final(root: Path, tmp_path: Path, capsys, *extra: str) -> pd.DataFrame:
    out = tmp_path / "figs" / "curve.png"
    assert main(["plot", "--data-root", str(root), "--task", "demo", "--metrics", "return", "--split-keys", "lr",
                 "--out", str(out), *extra]) == 0
    capsys.readouterr()
    final = pd.read_csv(out.with_name("curve-final.csv"))
    final["lr"] = [float(legend.split("=", 1)[1]) for legend in final["legend"]]
    return final.set_index("lr")


def _list_groups(root: Path, capsys, *extra: str) -> pd.DataFrame:
    assert main(["list", "--data-root", str(root), "--task", "demo", "--group-by", "lr", "--metrics", "return",
                 "--format", "csv", *extra]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("lr")


@pytest.mark.parametrize("options", [[], ["--final-window", "0.3"], ["--vary-len"], ["--where", "seed < 3"]])
def test_grouped_final_stats_equal_rla_plots_final_csv(sweep, tmp_path, capsys, options):
    plotted = _plot_final(sweep, tmp_path, capsys, *options)
    listed = _list_groups(sweep, capsys, *options)
    assert sorted(listed.index) == sorted(plotted.index) == sorted(LRS)
    for column in STAT_COLUMNS:
        assert listed[column].tolist() == plotted.loc[listed.index, column].tolist(), column
    assert set(listed["runs"]) == ({3} if options[:1] == ["--where"] else {4})


def test_the_final_value_is_each_runs_mean_over_the_final_window(tmp_path):
    root = tmp_path / "data"
    rng = np.random.default_rng(3)
    curves = {(lr, seed): rng.normal(size=100).round(6) for lr in (1e-3, 1e-2) for seed in range(3 if lr < 5e-3 else 2)}
    for (lr, seed), values in curves.items():
        make_run(root, task="t", params={"lr": lr, "seed": seed}, curves={"return": values.tolist()})
    # points=0: the grid is the logged steps 0..99, so the last 10% (x >= 89.1) is steps 90..99
    frame = group_final_frame(select_runs(root).runs, ["lr"], ["return"], points=0).set_index("lr")
    for lr in (1e-3, 1e-2):
        scores = np.array([values[90:].mean() for (l, _), values in curves.items() if l == lr])
        expected = final_stats(scores)
        row = frame.loc[lr]
        assert row["n"] == row["runs"] == len(scores) and row["window_start"] == pytest.approx(89.1)
        for column in ("mean", "median", "std", "ci_low", "ci_high"):
            assert row[column] == pytest.approx(expected[column], rel=1e-9, abs=1e-12), column


def test_the_table_shows_mean_ci_and_runs_per_group(sweep, capsys):
    assert main(["list", "--data-root", str(sweep), "--task", "demo", "--group-by", "lr", "--metrics", "return",
                 "--width", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["lr", "runs", "return", "mean", "[95%", "CI]"]
    listed = group_final_frame(select_runs(sweep, task="demo").runs, ["lr"], ["return"]).set_index("lr")
    for line, lr in zip(lines[1:4], LRS):
        row = listed.loc[lr]
        assert line.split()[:3] == [f"{lr:g}", "4", f"{row['mean']:.4g}"]
        assert f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]" in line
    assert lines[4].startswith("3 groups, 12 runs; a run's final value: its mean over the last 10% of time-step")


def test_runs_of_several_tasks_are_grouped_by_task_too(sweep, capsys):
    assert main(["list", "--data-root", str(sweep), "--group-by", "lr", "--metrics", "return",
                 "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table.columns[:2]) == ["task", "lr"]
    assert sorted(zip(table["task"], table["runs"])) == [("demo", 4)] * 3 + [("other", 1)]


def test_without_metrics_the_groups_and_their_sizes(sweep, capsys):
    assert main(["list", "--data-root", str(sweep), "--task", "demo", "--group-by", "lr", "seed",
                 "--format", "json", "--where", "seed < 2"]) == 0
    rows = pd.read_json(io.StringIO(capsys.readouterr().out))
    assert len(rows) == 6 and set(rows["runs"]) == {1} and list(rows.columns) == ["lr", "seed", "runs"]


@pytest.mark.parametrize("args, message", [
    (["--group-by", "lrr", "--metrics", "return"], "did you mean 'lr'"),
    (["--group-by", "lr", "--metrics", "retrun"], "did you mean 'return'"),
    (["--group-by", "lr", "--sort", "-lr"], "--sort does not apply to --group-by"),
    (["--group-by", "lr", "--final-window", "0"], "Bad --final-window 0"),
    (["--final-window", "0.2"], "need --group-by"),
])
def test_bad_group_by_options_are_errors(sweep, capsys, args, message):
    assert main(["list", "--data-root", str(sweep), "--task", "demo", *args]) != 0
    assert message in capsys.readouterr().err
