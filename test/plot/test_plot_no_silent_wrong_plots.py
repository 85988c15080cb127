"""Plots are never silently wrong: unknown split keys and metrics, mixed tasks, where files go.

Issue #18 item 4: ``--split-keys algoo`` drew one curve labelled ``algoo=NF``; ``rla plot``
without ``--task`` averaged runs of several tasks and cut them all to the shortest; ``--out
./figs/x.pdf`` landed under the data root.
"""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest

from RLA.errors import QueryError
from RLA.plot import plot_func
from RLA.query.testing import make_run
from rla_scripts.cli import main


@pytest.fixture
def two_tasks(tmp_path: Path) -> Path:
    """Task 'short' (x = 0..2) and task 'long' (x = 0..9), two seeds each, algo 'a' / 'b'."""
    root = tmp_path / "data"
    i = 0
    for task, length in (("short", 3), ("long", 10)):
        for algo in ("a", "b"):
            make_run(root, task=task, params={"algo": algo, "seed": 0, "lr": 0.1},
                     curves={"return": [float(s) for s in range(length)]}, steps=list(range(length)),
                     when=dt.datetime(2026, 11, 1, 0, 0, i))
            i += 1
    return root


def rows_of(path: Path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.timeout(60)
def test_unknown_split_key_is_an_error_with_did_you_mean(two_tasks, tmp_path):
    with pytest.raises(QueryError, match="No selected run has the split key 'algoo'") as info:
        plot_func(two_tasks, "long", ["*"], ["algoo"], ["return"], save_dir=tmp_path / "o", verbose=False)
    assert "did you mean 'algo'" in str(info.value) and "lr" in str(info.value)
    assert not (tmp_path / "o").exists(), "nothing is written for a refused plot"


@pytest.mark.timeout(60)
def test_split_key_some_runs_lack_is_kept_and_noted(tmp_path):
    root = tmp_path / "d"
    make_run(root, task="t", params={"algo": "a", "seed": 0}, curves={"r": [1.0, 2.0]})
    make_run(root, task="t", params={"seed": 1}, curves={"r": [1.0, 2.0]})
    result = plot_func(root, "t", ["*"], ["algo"], ["r"], save_dir=tmp_path, verbose=False)
    assert set(result.legends) == {"algo=a", "algo=NF"}
    assert any("1 of 2 runs lack it" in note for note in result.notes)


@pytest.mark.timeout(60)
def test_a_run_column_is_a_split_key(two_tasks, tmp_path):
    result = plot_func(two_tasks, None, ["*"], ["task"], ["return"], save_dir=tmp_path, verbose=False)
    assert result.legends == {"task=long": 2, "task=short": 2}


@pytest.mark.timeout(60)
def test_unknown_metric_is_an_error_with_did_you_mean(two_tasks, tmp_path):
    with pytest.raises(QueryError, match="No selected run logged 'retrun'") as info:
        plot_func(two_tasks, "long", ["*"], ["algo"], ["retrun"], save_dir=tmp_path, verbose=False)
    assert "did you mean 'return'" in str(info.value)


@pytest.mark.timeout(60)
def test_runs_of_several_tasks_are_refused_with_the_task_list(two_tasks, tmp_path):
    with pytest.raises(QueryError, match="belong to 2 tasks") as info:
        plot_func(two_tasks, None, ["*"], ["algo"], ["return"], save_dir=tmp_path / "o", verbose=False)
    text = str(info.value)
    assert "long (2 runs), short (2 runs)" in text and "--task long" in text and "--all-tasks" in text
    assert not (tmp_path / "o").exists()


@pytest.mark.timeout(60)
def test_all_tasks_draws_one_curve_per_task_each_over_its_own_length(two_tasks, tmp_path):
    result = plot_func(two_tasks, None, ["*"], ["algo"], ["return"], all_tasks=True, resample=0, smooth_step=0,
                       save_dir=tmp_path, save_name="all", verbose=False)
    assert set(result.legends) == {"task=long, algo=a", "task=long, algo=b", "task=short, algo=a",
                                   "task=short, algo=b"}
    top = {}
    for row in rows_of(tmp_path / "all.csv"):
        top[row["legend"]] = max(top.get(row["legend"], 0.0), float(row["x"]))
    assert top["task=long, algo=a"] == 9.0 and top["task=short, algo=a"] == 2.0, "no task cut to another's length"


@pytest.mark.timeout(60)
def test_all_tasks_with_regs2legends_is_refused(two_tasks, tmp_path):
    with pytest.raises(QueryError, match="all_tasks=True cannot be combined with regs2legends"):
        plot_func(two_tasks, None, ["*"], [], ["return"], all_tasks=True, regs2legends=["x"], save_dir=tmp_path,
                  verbose=False)


@pytest.mark.timeout(60)
def test_cli_split_key_typo_exits_2_and_writes_nothing(two_tasks, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = main(["plot", "--data-root", str(two_tasks), "--task", "long", "--metrics", "return",
                 "--split-keys", "algoo"])
    err = capsys.readouterr().err
    assert code == 2 and "No selected run has the split key 'algoo'" in err and "did you mean 'algo'" in err
    assert "Traceback" not in err and not list(tmp_path.glob("*.png"))


@pytest.mark.timeout(60)
def test_cli_dry_run_checks_too(two_tasks, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "--data-root", str(two_tasks), "--metrics", "return", "--dry-run"]) == 2
    assert "belong to 2 tasks" in capsys.readouterr().err
    assert main(["plot", "--data-root", str(two_tasks), "--task", "long", "--metrics", "return", "--split-keys",
                 "algoo", "--dry-run"]) == 2
    assert "did you mean 'algo'" in capsys.readouterr().err
    assert main(["plot", "--data-root", str(two_tasks), "--metrics", "return", "--split-keys", "algo",
                 "--all-tasks", "--dry-run"]) == 0
    assert "grouped by task, algo" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_cli_mixed_tasks_error_names_the_fix(two_tasks, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "--data-root", str(two_tasks), "--metrics", "return", "--split-keys", "algo"]) == 2
    err = capsys.readouterr().err
    assert "belong to 2 tasks" in err and "rla plot --task long" in err and "Traceback" not in err
    assert main(["plot", "--data-root", str(two_tasks), "--metrics", "return", "--split-keys", "algo",
                 "--all-tasks"]) == 0
    assert (tmp_path / "all-return.png").is_file()


@pytest.mark.timeout(60)
def test_cli_writes_relative_to_the_current_folder(two_tasks, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["plot", "--data-root", str(two_tasks), "--task", "long", "--metrics", "return"]) == 0
    assert (work / "long-return.png").read_bytes()[:4] == b"\x89PNG"
    assert (work / "long-return.csv").is_file() and (work / "long-return-final.csv").is_file()
    assert main(["plot", "--data-root", str(two_tasks), "--task", "long", "--metrics", "return",
                 "--out", "./figs/x.pdf"]) == 0
    assert (work / "figs" / "x.pdf").read_bytes()[:4] == b"%PDF" and (work / "figs" / "x.csv").is_file()
    absolute = tmp_path / "abs" / "y.png"
    assert main(["plot", "--data-root", str(two_tasks), "--task", "long", "--metrics", "return",
                 "--out", str(absolute)]) == 0
    assert absolute.is_file()
    assert not (two_tasks / "results").exists(), "the CLI writes nothing into the data root"


@pytest.mark.timeout(60)
def test_cli_says_when_runs_are_cut_and_how_to_keep_the_tails(tmp_path, monkeypatch, capsys):
    root = tmp_path / "d"
    make_run(root, task="t", params={"seed": 0}, curves={"r": [1.0] * 6}, steps=list(range(6)))
    make_run(root, task="t", params={"seed": 1}, curves={"r": [1.0] * 3}, steps=list(range(3)))
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "--data-root", str(root), "--task", "t", "--metrics", "r", "--resample", "0"]) == 0
    out = capsys.readouterr().out
    assert "cut to x <= 2" in out and "--vary-len" in out
