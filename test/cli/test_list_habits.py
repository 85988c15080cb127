"""``rla list``'s habits (#18 item 6): --sort -col, an empty or new database, a table that fits."""
from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from RLA.query.testing import make_run
from rla_scripts.argv import glue_dash_values
from rla_scripts.cli import main

pytestmark = pytest.mark.timeout(60)


def _csv(capsys: pytest.CaptureFixture) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def _table_lines(out: str) -> list:
    return [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("words", [["--sort", "-seed"], ["--sort=-seed"]])
def test_sort_descending_is_accepted_as_two_words_and_as_one(db, capsys, words):
    assert main(["list", "--data-root", str(db), "--format", "csv", *words]) == 0
    seeds = _csv(capsys)["seed"].tolist()
    assert seeds == sorted(seeds, reverse=True) and seeds[0] == 1


def test_sort_by_several_columns_mixed_directions(db, capsys):
    assert main(["list", "--data-root", str(db), "--format", "csv", "--sort", "-algo,seed"]) == 0
    table = _csv(capsys)
    assert list(zip(table["algo"], table["seed"])) == [("td3", 0), ("td3", 1), ("sac", 0), ("sac", 1), ("ppo", 0)]


def test_sort_dash_value_through_the_real_console_script(db):
    done = subprocess.run([sys.executable, "-m", "rla_scripts.cli", "list", "--data-root", str(db),
                           "--format", "json", "--sort", "-seed"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [row["seed"] for row in json.loads(done.stdout)][:2] == [1, 1]


def test_glue_leaves_options_and_words_after_double_dash_alone():
    assert glue_dash_values(["list", "--sort", "-seed"]) == ["list", "--sort=-seed"]
    assert glue_dash_values(["list", "--sort", "--format", "csv"]) == ["list", "--sort", "--format", "csv"]
    assert glue_dash_values(["list", "--sort", "-h"]) == ["list", "--sort", "-h"]
    assert glue_dash_values(["list", "--", "--sort", "-x"]) == ["list", "--", "--sort", "-x"]
    assert glue_dash_values(["list", "--where", "-x"]) == ["list", "--where", "-x"]


def test_an_unknown_sort_column_is_an_error(db, capsys):
    assert main(["list", "--data-root", str(db), "--sort", "-sed"]) == 2
    assert "Cannot sort by 'sed'" in capsys.readouterr().err


def test_newest_first_by_default(db, capsys):
    assert main(["list", "--data-root", str(db), "--format", "csv"]) == 0
    starts = pd.to_datetime(_csv(capsys)["start_time"])
    assert starts.is_monotonic_decreasing and starts.iloc[0] == pd.Timestamp(2026, 11, 1, 10, 0, 3)


def test_limit_keeps_the_newest_runs(db, capsys):
    assert main(["list", "--data-root", str(db), "--limit", "2", "--width", "0"]) == 0
    out = capsys.readouterr().out
    assert "10-00-03-000000" in out and "10-00-02-000000" in out and "10-00-01" not in out
    assert out.rstrip().endswith("2 of 5 runs")


def test_empty_data_root_lists_0_runs(tmp_path, capsys):
    root = tmp_path / "data"
    root.mkdir()
    assert main(["list", "--data-root", str(root)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "0 runs\n" and "has no runs yet" in captured.err
    assert main(["list", "--data-root", str(root), "--task", "demo", "--where", "lr > 1"]) == 0
    assert capsys.readouterr().out == "0 runs\n"
    assert main(["list", "--data-root", str(root), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_new_project_whose_data_root_is_not_made_yet_lists_0_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RLA_DATA_ROOT", raising=False)
    (tmp_path / "rla_config.yaml").write_text("DATA_ROOT: ./data\n")
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "0 runs\n" and "does not exist yet" in captured.err
    assert not (tmp_path / "data").exists()


def test_a_missing_explicit_data_root_is_still_an_error(tmp_path, capsys):
    assert main(["list", "--data-root", str(tmp_path / "typo")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_no_match_in_a_database_with_runs_is_still_an_error(db, capsys):
    assert main(["list", "--data-root", str(db), "--task", "dmo"]) == 1
    assert "did you mean 'demo'" in capsys.readouterr().err


def test_one_run_says_1_run(db, capsys):
    assert main(["list", "--data-root", str(db), "--where", "algo == 'ppo'"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == "1 run"


@pytest.mark.parametrize("width", [50, 72, 100])
def test_the_table_fits_the_width_and_names_what_it_left_out(db, capsys, width):
    assert main(["list", "--data-root", str(db), "--metrics", "return", "--width", str(width)]) == 0
    lines = _table_lines(capsys.readouterr().out)
    assert all(len(line) <= width for line in lines[:-1])
    header = lines[0].split()
    assert header[0] == "index" and "last(return)" in header  # the metric asked for stays
    hidden = re.search(r"not shown to fit \d+ characters: ([^;]+);", lines[-1])
    everything = ["index", "status", "start_time", "host", "algo", "seed", "lr", "last(return)"]
    assert set(header) | set(hidden.group(1).split(", ") if hidden else []) == set(everything)


def test_columns_env_sets_the_width(db, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["list", "--data-root", str(db)]) == 0
    lines = _table_lines(capsys.readouterr().out)
    assert all(len(line) <= 60 for line in lines[:-1]) and "not shown" in lines[-1]


def test_the_run_index_is_never_cut(db, capsys):
    assert main(["list", "--data-root", str(db), "--width", "10"]) == 0
    out = capsys.readouterr().out
    assert "demo/2026/11/01/10-00-03-000000" in out


def test_times_to_the_second_and_no_nan_or_empty_columns(tmp_path, capsys):
    root = tmp_path / "data"
    for i in range(3):
        params = {"seed": i, "lr": 0.1} if i else {"seed": i, "lr": 0.1, "note": "only the oldest"}
        make_run(root, task="t", params=params, curves={"return": [1.0, 2.0 + i]},
                 when=dt.datetime(2026, 11, 25, 14, 3, 7 + i, 654321), style="original", tracked=["seed"])
    assert main(["list", "--data-root", str(root), "--limit", "2", "--width", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"unknown  2026-11-25 14:03:09  ", out) and ".654321" not in out
    header = out.splitlines()[0].split()
    assert "note" not in header and "host" not in header and "NaN" not in out and "nan" not in out
    assert main(["list", "--data-root", str(root), "--width", "0"]) == 0
    out = capsys.readouterr().out
    assert "note" in out.splitlines()[0].split() and "only the oldest" in out and " - " in out


def test_long_text_cells_are_cut_with_an_ellipsis(tmp_path, capsys):
    root = tmp_path / "data"
    for i in range(2):
        make_run(root, task="t", params={"comment": "x" * 100 + str(i)}, curves={"return": [1.0]},
                 when=dt.datetime(2026, 11, 25, 14, 3, i))
    assert main(["list", "--data-root", str(root), "--width", "0"]) == 0
    out = capsys.readouterr().out
    assert "x" * 39 + "…" in out and "x" * 41 not in out
