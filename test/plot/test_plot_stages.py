"""Each plot stage alone: select, load, resample and smooth, aggregate, save (draw: test_plot_draw.py)."""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import QueryError, RLAError, RunNotFoundError
from RLA.plot.aggregate import rescale, summarize_group
from RLA.plot.load import adjust, load
from RLA.plot.options import SaveOptions, StatOptions
from RLA.plot.resample import resample_group
from RLA.plot.save import curve_rows, final_row, save_plot, stem_and_formats
from RLA.plot.select import RunQuery, select
from RLA.query import BrokenRunWarning
from RLA.query.testing import make_crafted_runs, make_run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Task t: algo a (seeds 0, 1) and b (seed 0), x = 0, 10, 20; task u: one run."""
    root = tmp_path / "data"
    values = {("a", 0): [1.0, 2.0, 3.0], ("a", 1): [3.0, 4.0, 100.0], ("b", 0): [0.0, 0.0, 0.0]}
    for i, ((algo, seed), ys) in enumerate(values.items()):
        make_run(
            root,
            task="t",
            params={"algo": algo, "seed": seed},
            curves={"r": ys, "s": [5.0] * 3},
            steps=[0, 10, 20],
            when=dt.datetime(2026, 11, 1, 0, 0, i),
        )
    make_run(
        root,
        task="u",
        params={"algo": "a", "seed": 0},
        curves={"r": [1.0]},
        when=dt.datetime(2026, 11, 1, 0, 1, 0),
    )
    return root


# -- select --------------------------------------------------------------------------------------


def test_select_keeps_each_regs_runs_in_reg_order_and_each_run_once(db):
    chosen = select(RunQuery(db, "t", ["*algo=b*", "*algo=a*", "*"], ["algo"]))
    assert [[r.params["algo"] for r in rows] for rows in chosen.runs_per_reg] == [
        ["b"],
        ["a", "a"],
        ["a", "a", "b"],
    ]
    assert len(chosen.rows) == 3 and len({r.index for r in chosen.rows}) == 3
    assert chosen.split_keys == ["algo"] and chosen.key_notes == []


def test_select_hp_filter_compares_values_as_text(db):
    chosen = select(RunQuery(db, "t", ["*"], ["algo"], hp_filter_dict={"seed": ["1"], "algo": ["a", "b"]}))
    assert [(r.params["algo"], r.params["seed"]) for r in chosen.rows] == [("a", 1)]


def test_select_without_a_match_is_run_not_found(db):
    with pytest.raises(RunNotFoundError, match="No run matches regs") as caught:
        select(RunQuery(db, "t", ["1999/*"], ["algo"]))
    assert caught.value.found == "0 of 3 runs" and caught.value.fix


def test_select_groups_several_tasks_only_when_asked(db):
    with pytest.raises(QueryError, match="belong to 2 tasks"):
        select(RunQuery(db, None, ["*"], ["algo"]))
    chosen = select(RunQuery(db, None, ["*"], ["algo"], all_tasks=True))
    assert chosen.split_keys == ["task", "algo"] and len(chosen.rows) == 4


def test_select_checks_split_keys_unless_legends_are_given(db):
    with pytest.raises(QueryError, match="No selected run has the split key 'algoo'"):
        select(RunQuery(db, "t", ["*"], ["algoo"]))
    assert select(RunQuery(db, "t", ["*"], ["algoo"], regs2legends=["x"])).split_keys == ["algoo"]


def test_select_prints_what_each_reg_found_when_asked(db, capsys):
    select(RunQuery(db, "t", ["*algo=b*"], [], summarize_res=True))
    out = capsys.readouterr().out
    assert "for regex *algo=b*, we have the following logs:" in out and out.count("find log") == 1


@pytest.mark.timeout(120)
def test_a_damaged_run_is_reported_at_the_callers_line(tmp_path):
    root = tmp_path / "data"
    make_crafted_runs(root, names=["run_json_binary"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = select(RunQuery(root, "crafted", ["*"], ["kind"]))
    broken = [w for w in caught if issubclass(w.category, BrokenRunWarning)]
    assert len(broken) == 1 and broken[0].filename == __file__
    assert len(chosen.skipped) == 1 and len(chosen.rows) == 3


# -- load ----------------------------------------------------------------------------------------


def test_load_gives_each_runs_xy_per_metric_within_the_bound(db):
    rows = select(RunQuery(db, "t", ["*"], ["algo"])).rows
    loaded = load(rows, ["r", "s"], x_bound=(5, 20))
    assert sorted(loaded.curves) == ["r", "s"]
    x, y = loaded.curves["r"][rows[1].index]
    assert x.tolist() == [10.0, 20.0] and y.tolist() == [4.0, 100.0]
    assert loaded.skipped == []


def test_load_filters_each_run_then_scales_it(db):
    rows = select(RunQuery(db, "t", ["*"], ["algo"])).rows
    clip = lambda x, y: (x, np.minimum(y, 10.0))  # noqa: E731 - a one-line filter
    loaded = load(rows, ["r"], value_filter=clip, scale_dict={"r": lambda y: y * 2})
    assert loaded.curves["r"][rows[1].index][1].tolist() == [6.0, 8.0, 20.0]  # 100 -> 10 -> 20


def test_adjust_without_filter_or_scale_keeps_the_values():
    x, y = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    assert adjust((x, y)) == (x, y)


# -- resample and smooth ---------------------------------------------------------------------------


def test_resample_group_cuts_to_the_shortest_run_and_says_where():
    runs = [(np.array([0.0, 1.0, 2.0, 3.0]), np.ones(4)), (np.array([0.0, 1.0]), np.full(2, 3.0))]
    cut = resample_group(runs, 0, 0.0)
    assert cut.grid.tolist() == [0.0, 1.0] and cut.cut_at == 1.0
    kept = resample_group(runs, 0, 0.0, vary_len=True)
    assert kept.grid.tolist() == [0.0, 1.0, 2.0, 3.0] and kept.cut_at is None
    assert np.isnan(kept.raw[1, 2:]).all() and np.array_equal(kept.raw, kept.smooth, equal_nan=True)


def test_resample_group_smooths_but_keeps_the_raw_values():
    runs = [(np.arange(10.0), np.array([0.0, 10.0] * 5))]
    sampled = resample_group(runs, 10, 2.0)
    assert sampled.raw[0].tolist() == [0.0, 10.0] * 5
    assert sampled.smooth[0].std() < sampled.raw[0].std() / 2


def test_resample_group_refuses_runs_without_a_shared_range():
    with pytest.raises(RLAError, match="share no x range"):
        resample_group([(np.array([0.0, 1.0]), np.ones(2)), (np.array([5.0, 6.0]), np.ones(2))], 8, 1.0)


# -- aggregate -----------------------------------------------------------------------------------


def _sampled(rows):
    raw = np.array(rows, dtype=float)
    return resample_group([(np.array([0.0, 10.0, 20.0]), r) for r in raw], 0, 0.0)


def test_summarize_group_centers_bands_and_final_window_by_hand():
    sampled = _sampled([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])
    summary = summarize_group("g", 2, sampled, StatOptions(agg="mean", band_kind="std", final_window=0.5))
    curve = summary.curve
    assert curve.center.tolist() == [2.0, 3.0, 4.0] and curve.n == 2 and curve.color_index == 2
    assert curve.high - curve.center == pytest.approx([2**0.5] * 3)
    assert curve.n_at_x.tolist() == [2, 2, 2]
    # window x >= 10: run scores 2.5 and 4.5
    assert summary.final["mean"] == pytest.approx(3.5) and summary.final["window_start"] == 10.0


def test_summarize_group_median_and_no_band():
    sampled = _sampled([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [9.0, 9.0, 9.0]])
    curve = summarize_group("g", 0, sampled, StatOptions(agg="median", band_kind="none")).curve
    assert curve.center.tolist() == [1.0, 1.0, 1.0]
    assert curve.low is curve.center and curve.high is curve.center


def test_rescale_relabels_x_and_the_final_window_follows():
    assert rescale(np.array([10.0, 15.0, 20.0]), 1.0).tolist() == [0.0, 0.5, 1.0]
    assert rescale(np.array([3.0]), 1.0).tolist() == [3.0]  # one point: nothing to stretch
    sampled = _sampled([[1.0, 2.0, 3.0]])
    summary = summarize_group("g", 0, sampled, StatOptions(rescale_idx=100.0, final_window=0.5))
    assert summary.curve.x.tolist() == [0.0, 50.0, 100.0] and summary.final["window_start"] == 50.0


# -- save ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, stem, formats",
    [
        (SaveOptions(), "/r/results/easy_plot/t-r", ["png"]),
        (SaveOptions(pretty=True), "/r/results/easy_plot/t-r", ["png", "pdf"]),
        (SaveOptions(save_name="fig.PDF", save_dir="/out"), "/out/fig", ["pdf"]),
        (SaveOptions(save_name="fig.svg", formats=["png"]), "/r/results/easy_plot/fig", ["png"]),
        (SaveOptions(save_name="/abs/fig.v2", save_dir="/out"), "/abs/fig.v2", ["png"]),
    ],
)
def test_stem_and_formats(options, stem, formats):
    assert stem_and_formats(Path("/r"), options, "t-r") == (Path(stem), formats)


def test_an_unknown_format_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(RLAError, match="Unknown figure format 'jpg'"):
        save_plot(object(), tmp_path, SaveOptions(formats=["jpg"]), "x", [], [])
    assert list(tmp_path.iterdir()) == []


def test_csv_lines_hold_plain_numbers_and_quoted_text():
    sampled = _sampled([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])
    summary = summarize_group('lr=0.1, algo="x"', 0, sampled, StatOptions(band_kind="none"))
    lines = curve_rows("return", summary.curve)
    assert lines[0] == 'return,"lr=0.1, algo=""x""",2,0.0,2.0,2.0,2.0,2'
    assert final_row("return", "g", summary.final).startswith("return,g,2,4.0,4.0,4.0,")


def test_save_plot_writes_figures_then_the_csvs(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot(1, 1, 1).plot([0, 1], [0, 1])
    files = save_plot(fig, tmp_path, SaveOptions(formats=["png", "svg"]), "t-r", ["a"], ["b", "c"])
    stem = tmp_path / "results" / "easy_plot" / "t-r"
    assert [p.name for p in files] == ["t-r.png", "t-r.svg", "t-r.csv", "t-r-final.csv"]
    assert stem.with_name("t-r.csv").read_text().splitlines()[1:] == ["a"]
    assert stem.with_name("t-r-final.csv").read_text().splitlines()[1:] == ["b", "c"]
    assert not [p for p in stem.parent.iterdir() if p.name.startswith(".")]  # no temp file left
