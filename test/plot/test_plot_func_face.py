"""plot_func keeps the original's signature: its 15 positional parameters in order, the rest by name.

The original passed ``*args`` on to ``plot_util.plot_results``, whose options are keyword-only,
so an extra positional argument failed; plot_func refuses it with an RLAError that says what
it expected, what it found and how to fix the call (it used to drop them without a word).
"""

from __future__ import annotations

import csv
import datetime as dt
import inspect
from pathlib import Path

import pytest

from RLA.errors import RLAError
from RLA.plot import default_key_to_legend, plot_func
from RLA.plot.options import POSITIONAL
from RLA.query import BrokenRunWarning
from RLA.query.testing import make_crafted_runs, make_run

ORIGINAL_DEFAULTS = {
    "use_buf": False,
    "verbose": True,
    "xlim": None,
    "xlabel": "time-step",
    "ylabel": None,
    "scale_dict": None,
    "regs2legends": None,
    "key_to_legend_fn": default_key_to_legend,
    "split_by_metrics": True,
    "save_name": None,
}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for i, (algo, ys) in enumerate((("a", [1.0, 2.0, 3.0]), ("a", [3.0, 4.0, 5.0]), ("b", [0.0, 1.0, 2.0]))):
        make_run(
            root,
            task="t",
            params={"algo": algo, "seed": i},
            curves={"r": ys, "s": ys},
            steps=[0, 10, 20],
            when=dt.datetime(2026, 11, 1, 0, 0, i),
        )
    return root


def test_the_signature_is_the_originals():
    params = list(inspect.signature(plot_func).parameters.values())
    names = [p.name for p in params]
    assert tuple(names[: len(POSITIONAL)]) == POSITIONAL
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[: len(POSITIONAL)])
    assert {p.name: p.default for p in params if p.name in ORIGINAL_DEFAULTS} == ORIGINAL_DEFAULTS
    assert params[len(POSITIONAL)].kind is inspect.Parameter.VAR_POSITIONAL
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in params[len(POSITIONAL) + 1 :])


@pytest.mark.timeout(60)
def test_a_positional_argument_after_save_name_is_refused_and_nothing_is_written(db):
    with pytest.raises(RLAError, match="plot_func got 17 positional arguments") as caught:
        plot_func(
            db,
            "t",
            ["*"],
            ["algo"],
            ["r"],
            False,
            False,
            None,
            "x",
            None,
            None,
            None,
            default_key_to_legend,
            True,
            "fig",
            256,
            2.0,
        )
    error = caught.value
    assert error.expected and "at most 15" in error.expected and "save_name" in error.expected
    assert error.found == "2 more after save_name: 256, 2.0"
    assert error.fix and "by keyword" in error.fix and "resample=512" in error.fix
    assert not (db / "results").exists()


@pytest.mark.timeout(60)
def test_the_original_pair_face_refuses_them_too(db):
    from RLA.easy_plot.plot_func_v2 import plot_func as v2

    with pytest.raises(RLAError, match="16 positional arguments"):
        v2(
            str(db),
            "t",
            ["*"],
            ["algo"],
            ["r"],
            False,
            False,
            None,
            "x",
            None,
            None,
            None,
            default_key_to_legend,
            True,
            "fig",
            512,
        )
    assert not (db / "results").exists()


@pytest.mark.timeout(60)
def test_the_original_pair_face_takes_verbose_positionally(db, capsys):
    from RLA.easy_plot.plot_func_v2 import plot_func as v2

    g2lf, score_results = v2(
        str(db),
        "t",
        ["*"],
        ["algo"],
        ["r"],
        False,
        False,
        None,
        "x",
        None,
        None,
        None,
        default_key_to_legend,
        True,
        "fig.png",
        resample=8,
    )
    assert capsys.readouterr().out == "" and set(g2lf) == {"r"} and "algo=a-err" in score_results
    assert (db / "results" / "easy_plot" / "fig.png").is_file()


@pytest.mark.timeout(60)
def test_the_fifteen_positional_arguments_keep_the_originals_meaning(db, tmp_path, capsys):
    def legend(parse_dict, keys, metric, use_y_name):
        return f"{parse_dict['algo']}/{metric}/{use_y_name}"

    result = plot_func(
        db,
        "t",
        ["*"],
        ["algo"],
        ["r", "s"],
        False,
        False,
        10,
        "steps",
        "value",
        {"r": lambda y: y * 100},
        None,
        legend,
        False,
        "pos.png",
        save_dir=tmp_path,
        resample=0,
        smooth_step=0,
    )
    assert capsys.readouterr().out == ""  # verbose=False
    assert [p.name for p in result.files] == ["pos.png", "pos.csv", "pos-final.csv"]
    assert sorted(result.legends) == ["a/r/True", "a/s/True", "b/r/True", "b/s/True"]  # merged panel
    with open(tmp_path / "pos.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert max(float(r["x"]) for r in rows) == 10.0  # xlim
    assert [float(r["center"]) for r in rows if r["legend"] == "a/r/True"] == [200.0, 300.0]  # scale_dict
    ax = result.figure.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("steps", "value", "r, s")


@pytest.mark.timeout(60)
def test_the_originals_plot_results_flags_still_work(db, tmp_path):
    std = plot_func(
        db,
        "t",
        ["*"],
        ["algo"],
        ["r"],
        save_dir=tmp_path,
        save_name="std",
        verbose=False,
        resample=0,
        smooth_step=0,
        shaded_std=True,
        shaded_range=True,
        average_group=True,
    )
    err = plot_func(
        db,
        "t",
        ["*"],
        ["algo"],
        ["r"],
        save_dir=tmp_path,
        save_name="err",
        verbose=False,
        resample=0,
        smooth_step=0,
        shaded_err=True,
    )

    def high_at_20(name):
        with open(tmp_path / f"{name}.csv", newline="") as handle:
            return [float(r["high"]) for r in csv.DictReader(handle) if r["legend"] == "algo=a"][-1]

    # algo a at x=20: 3 and 5, mean 4, sample std sqrt(2), stderr 1
    assert high_at_20("std") == pytest.approx(4 + 2**0.5) and high_at_20("err") == pytest.approx(5.0)
    assert std.legends == err.legends == {"algo=a": 2, "algo=b": 1}


@pytest.mark.timeout(60)
def test_a_damaged_run_is_reported_at_the_line_that_called_plot_func(tmp_path):
    import warnings

    root = tmp_path / "data"
    make_crafted_runs(root, names=["run_json_binary"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = plot_func(root, "crafted", ["*"], ["kind"], ["return"], save_dir=tmp_path, verbose=False)
    broken = [w for w in caught if issubclass(w.category, BrokenRunWarning)]
    assert [w.filename for w in broken] == [__file__] and len(result.skipped) == 1
