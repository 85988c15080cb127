"""Hostile names and values against the streamed listing and the SQL ``where`` (issue #23).

The Python evaluator is the reference for which runs a ``where`` selects; names reach SQL only
as arguments, never as SQL text.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from pathlib import Path

import pytest

from RLA.query import Catalog
from RLA.query.expr import parse_query
from RLA.query.pushdown import matching_keys
from RLA.query.testing import make_run
from rla_scripts.cli import main
from rla_scripts.commands import _list_csv

WHEN = dt.datetime(2026, 1, 1)


def test_a_metric_named_with_a_quote_is_an_argument_not_sql(tmp_path: Path) -> None:
    root = tmp_path / "data"
    when = dt.datetime(2026, 1, 1)
    make_run(root, task="t", params={"k": 1}, curves={"m'q": [1.0]}, when=when)
    make_run(root, task="t", params={"k": 2}, curves={"m'q": [-1.0]}, when=when + dt.timedelta(hours=1))
    make_run(
        root, task="t", params={"k": 3}, curves={"x') OR 1=1 --": [5.0]}, when=when + dt.timedelta(hours=2)
    )
    with Catalog(root) as catalog:
        catalog.refresh(None, False)
        for where, expected in [
            ("last(\"m'q\") > 0", ["k=1"]),
            ("not max(\"m'q\") < 0", ["k=1", "k=3"]),
            ("last(\"x') OR 1=1 --\") > 1", ["k=3"]),
        ]:
            keys = matching_keys(catalog, None, False, parse_query(where))
            assert sorted(key.rpartition("&")[2] for key in keys) == expected, (where, keys)


def _same_bytes(root: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> None:
    """The streamed listing equals the frame path's (exit code, stdout, stderr)."""
    argv = ["list", "--format", "csv", "--data-root", str(root), *extra]
    results = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(_list_csv, "wanted", lambda args, fast=fast: fast and args.format == "csv")
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            results.append((code, out.getvalue(), err.getvalue()))
    assert results[0] == results[1], (extra, results)


def test_a_metric_named_with_a_double_quote_is_listed_as_the_frame_lists_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's JSON paths cannot reach such a name: the stream must not ask them to."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"a": 1}, curves={'m"q': [0.5], "m": [1.0]}, when=WHEN)
    make_run(root, task="t", params={"a": 2}, curves={"m": [2.0]}, when=WHEN + dt.timedelta(hours=1))
    for options in [(), ("--where", "a >= 1"), ("--columns", "a,last(m)")]:
        _same_bytes(root, monkeypatch, *options)


def test_an_integer_beyond_int64_among_missing_values_is_written_as_pandas_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pandas makes such a column float (9.223372036854776e+18) when a run lacks it."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"p": 2**63 + 3, "a": 1}, when=WHEN)
    make_run(root, task="t", params={"a": 2}, when=WHEN + dt.timedelta(hours=1))
    make_run(root, task="t", params={"p": 0.5, "a": 3}, when=WHEN + dt.timedelta(hours=2))
    for options in [(), ("--limit", "2"), ("--where", "a != 3")]:
        _same_bytes(root, monkeypatch, *options)


def test_a_hyper_parameter_named_index_orders_runs_as_the_frame_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs tied on start time are ordered by the index column, which the hyper-parameter shows."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"index": "zzz", "a": 1}, when=WHEN)
    make_run(root, task="t", params={"a": 2}, when=WHEN)
    make_run(root, task="t", params={"index": "aaa", "a": 3}, when=WHEN)
    for options in [(), ("--all",), ("--where", "a > 0")]:
        _same_bytes(root, monkeypatch, *options)


def test_a_negative_limit_and_an_empty_column_list_are_written_as_the_frame_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--limit -1`` is pandas' head(-1) (all runs but the last); ``--columns ,`` names no column."""
    root = tmp_path / "data"
    for i in range(3):
        make_run(root, task="t", params={"a": i}, when=WHEN + dt.timedelta(hours=i))
    for options in [("--limit", "-1"), ("--limit", "-2", "--where", "a >= 0"), ("--columns", ",")]:
        _same_bytes(root, monkeypatch, *options)


def test_hyper_parameters_named_like_sort_keys_and_times_list_without_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``index`` holding a number beside the runs' texts, ``start_time``/``end_time`` holding
    no time: the listing shows the values as they are (not a time 5 us after 1970)."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"start_time": "zzz", "end_time": 5, "index": 3}, when=WHEN)
    make_run(root, task="t", params={"a": 2}, when=WHEN + dt.timedelta(hours=1))
    _same_bytes(root, monkeypatch)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["list", "--format", "csv", "--data-root", str(root)]) == 0
    first = out.getvalue().splitlines()[1]
    assert first.startswith("3,t,finished,zzz,5,"), out.getvalue()


def test_a_where_with_a_list_as_long_as_a_query_may_be_is_decided_in_sql(tmp_path: Path) -> None:
    """SQLite refuses expressions deeper than 1000 levels: ``p in [1, ..., 2000]`` must not be one."""
    root = tmp_path / "data"
    for i in range(3):
        make_run(root, task="t", params={"p": i * 1000, "s": f"v{i}"}, when=WHEN + dt.timedelta(hours=i))
    numbers = "[" + ",".join(str(i) for i in range(1, 1900)) + "]"
    texts = "[" + ",".join(f"'v{i}'" for i in range(1, 1300)) + "]"
    with Catalog(root) as catalog:
        catalog.refresh(None, False)
        for where, expected in [
            (f"p in {numbers}", ["p=1000"]),
            (f"p not in {numbers}", ["p=0", "p=2000"]),
            (f"s in {texts} and not p == 1000", ["p=2000"]),
        ]:
            assert len(where) <= 10000
            keys = matching_keys(catalog, None, False, parse_query(where))
            assert sorted(key.split("&")[1] for key in keys) == expected, where[:40]


def test_texts_holding_a_nul_character_are_listed_and_selected_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's text functions stop at NUL: such a value or run text is decided in Python."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"k": 1, "z": "a\x00b"}, when=WHEN)
    make_run(root, task="t", params={"k": 2, "z": "x"}, host="h\x00st", when=WHEN + dt.timedelta(hours=1))
    make_run(root, task="t", params={"k": 3, "z": "y"}, when=WHEN + dt.timedelta(hours=2))
    for options in [
        (),
        ("--where", "z != 'x'"),
        ("--where", "k > 0"),
        ("--columns", "z,host,k"),
        ("--columns", "k,host"),
    ]:
        _same_bytes(root, monkeypatch, *options)
    with Catalog(root) as catalog:
        catalog.refresh(None, False)
        keys = matching_keys(catalog, None, False, parse_query("z == 'a\\x00b'"))
        assert [key.split("&")[1] for key in keys] == ["k=1"]


def test_an_index_of_schema_7_that_trusts_a_nul_text_is_rebuilt(tmp_path: Path) -> None:
    """Schema 7 stored such rows as ``exact``: a file of that version is not read."""
    import sqlite3

    from RLA.layout import INDEX_DB

    root = tmp_path / "data"
    make_run(root, task="t", params={"k": 1, "z": "a\x00b"}, when=WHEN)
    make_run(root, task="t", params={"k": 2, "z": "x"}, when=WHEN + dt.timedelta(hours=1))
    with Catalog(root) as catalog:
        catalog.refresh(None, False)
    with sqlite3.connect(root / INDEX_DB) as conn:
        conn.execute("UPDATE runs SET exact = 1")
        conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema'")
    conn.close()
    with Catalog(root) as catalog:
        catalog.refresh(None, False)
        keys = matching_keys(catalog, None, False, parse_query("z == 'a\\x00b'"))
        assert [key.split("&")[1] for key in keys] == ["k=1"]


def test_a_number_named_name_on_a_row_python_builds_is_listed_as_the_frame_lists_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The column of numbers ``name`` must not read the folder name of a row built in Python
    (NaN makes it one) as a number."""
    root = tmp_path / "data"
    make_run(root, task="t", params={"name": 1.5, "p": float("nan")}, when=WHEN)
    make_run(root, task="t", params={"name": 2.5, "p": 1}, when=WHEN + dt.timedelta(hours=1))
    for options in [(), ("--where", "name < 2"), ("--columns", "p,name")]:
        _same_bytes(root, monkeypatch, *options)
