"""``rla list --format csv`` streamed from the index writes the same bytes as the frame path.

The stream (:mod:`RLA.query.csv_stream`) must decide each column's format as pandas does
(integers, numbers with gaps, booleans, texts, lists, mixed columns, times of every
resolution) and hand the rows it cannot write exactly to the reference code. Each test
runs the CLI twice on the same tree, once with the stream and once with it turned off, and
checks the stream was really taken.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import random
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from RLA.query.testing import make_run
from rla_scripts.cli import main
from rla_scripts.commands import _list_csv


def _run(argv: List[str], fast: bool, monkeypatch: pytest.MonkeyPatch) -> Tuple[int, str, str, bool]:
    taken = []
    real_stream = _list_csv.stream

    def stream(*args: Any) -> bool:
        taken.append(real_stream(*args))
        return taken[-1]

    with monkeypatch.context() as patch:
        patch.setattr(_list_csv, "stream", stream)
        if not fast:
            patch.setattr(_list_csv, "wanted", lambda args: False)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    return code, out.getvalue(), err.getvalue(), any(taken)


def _same(root: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> bool:
    """Both paths give the same exit code, stdout and stderr; returns whether the stream ran."""
    argv = ["list", "--format", "csv", "--data-root", str(root), *extra]
    fast = _run(argv, True, monkeypatch)
    slow = _run(argv, False, monkeypatch)
    assert fast[:3] == slow[:3], (extra, fast[1], slow[1], fast[2], slow[2])
    assert not slow[3]
    return fast[3]


OPTIONS = [
    (),
    ("--task", "mujoco"),
    ("--limit", "3"),
    ("--columns", "index,lr,last(return),seed"),
    ("--all",),
    ("--archived",),
    ("--task", "other"),
    ("--verify",),
]


def test_the_query_corpus_lists_the_same_bytes_streamed(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = [_same(db, monkeypatch, *options) for options in OPTIONS]
    assert all(taken[:4]), taken


def _mixed_root(root: Path) -> Path:
    """Runs whose columns have every kind pandas tells apart, and rows only the frame can write."""
    when = dt.datetime(2026, 3, 1, 8, 0, 0)
    values: List[Dict[str, Any]] = [
        {"i": 1, "f": 0.1, "gap": 3, "b": True, "s": "plain", "l": [1, "a"], "host": "shadow", "none": None},
        {"i": 2, "f": 2, "b": False, "s": 'q"uote, comma', "l": [], "mixed": 1, "none": None, "big": 2**60},
        {"i": -7, "f": 1e16, "gap": 5, "b": True, "s": "line\nbreak é", "mixed": "x", "nan": float("nan")},
        {"i": 0, "f": 1e-5, "b": True, "s": "", "mixed": True, "archived": 3, "net": {"h": 64}, "task": "t2"},
    ]
    for i, params in enumerate(values):
        make_run(
            root,
            task="mix",
            params=params,
            curves={"return": [1, 2 * i], **({"loss": [0.5, 0.25]} if i % 2 else {})},
            when=when + dt.timedelta(hours=i, microseconds=1000 * i),
            status=["finished", "running", "crashed", "killed"][i],
            archived=i == 3,
        )
    make_run(root, task="mix", params={"i": 9, "f": 0.5}, style="original", when=dt.datetime(2025, 1, 1))
    make_run(root, task="mix", params={"i": 10}, style="backup", when=dt.datetime(2025, 1, 2, 3, 4, 5))
    return root


def test_every_kind_of_column_lists_the_same_bytes_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _mixed_root(tmp_path / "data")
    for options in [
        (),
        ("--all",),
        ("--limit", "2"),
        ("--archived",),
        ("--columns", "s,l,none,big,nan,host,task"),
    ]:
        assert _same(root, monkeypatch, *options), options


def test_a_damaged_run_and_a_fragment_are_reported_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    root = tmp_path / "data"
    make_run(root, task="t", params={"a": 1})
    broken = make_run(root, task="t", params={"a": 2})
    (broken.log_dir / "run.json").write_text("{not json", encoding="utf-8")
    fragment = make_run(root, task="t", params={"a": 3})
    shutil.rmtree(fragment.code_dir)
    assert _same(root, monkeypatch)
    code, out, err, _ = _run(["list", "--format", "csv", "--data-root", str(root)], True, monkeypatch)
    assert "skipped" in err and "fragment" in err and len(out.splitlines()) == 3


_POOL = [
    0,
    1,
    -3,
    2**40,
    0.5,
    1e-7,
    3.0,
    1e300,
    True,
    False,
    None,
    "a",
    "b,c",
    "",
    "1",
    [1, 2],
    ["x"],
    [],
    2**60,
    float("nan"),
    float("inf"),
    {"k": 1},
]


@pytest.mark.timeout(120)
def test_random_columns_list_the_same_bytes_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(23)
    taken = 0
    for case in range(12):
        root = tmp_path / f"r{case}"
        for i in range(rng.randint(1, 5)):
            params = {k: rng.choice(_POOL) for k in ("p", "q", "r") if rng.random() < 0.8}
            when = dt.datetime(2026, 1, 1) + dt.timedelta(
                seconds=rng.choice([0, 1, 86400]) * i, microseconds=rng.choice([0, 0, 1000, 7])
            )
            make_run(
                root,
                task="r",
                params=params,
                curves={"m": [rng.choice([1, 2.5, 3])]} if rng.random() < 0.7 else None,
                when=when,
                status=rng.choice(["finished", "crashed"]),
            )
        taken += _same(root, monkeypatch)
    assert taken >= 6, taken


def test_runs_tied_on_start_time_are_ordered_by_index_as_the_frame_does(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "data"
    when = dt.datetime(2026, 5, 1, 12, 0, 0)
    make_run(root, task="b", params={"a": 1}, when=when)
    make_run(root, task="z", params={"a": 2}, when=when, archived=True)  # key arc:z/... sorts before b/...
    assert _same(root, monkeypatch, "--all")


def test_a_new_run_that_changes_a_columns_kind_is_written_in_the_new_kind(
    tmp_path: Path, monkeypatch
) -> None:
    root = tmp_path / "data"
    make_run(root, task="t", params={"x": 1})
    assert _same(root, monkeypatch)
    make_run(root, task="t", params={"x": 0.5})  # the column becomes float: 1 is now written 1.0
    assert _same(root, monkeypatch)
    code, out, _, taken = _run(["list", "--format", "csv", "--data-root", str(root)], True, monkeypatch)
    assert taken and ",1.0," in out or out.rstrip().endswith("1.0"), out


def test_fragments_of_every_shape_are_reported_as_the_frame_path_does(tmp_path: Path, monkeypatch) -> None:
    import shutil

    root = tmp_path / "data"
    make_run(root, task="t", params={"a": 1})
    no_code = make_run(root, task="t", params={"a": 2})
    shutil.rmtree(no_code.code_dir)
    archived = make_run(root, task="t", params={"a": 3}, archived=True)
    shutil.rmtree(archived.code_dir)
    code_only = make_run(root, task="t", params={"a": 4})
    shutil.rmtree(code_only.log_dir)  # no run.json: its log/ counts too
    legacy = make_run(root, task="u", params={"a": 5}, style="original")
    shutil.rmtree(legacy.code_dir)
    for options in [(), ("--all",), ("--archived",), ("--task", "u")]:
        assert _same(root, monkeypatch, *options), options
    _, _, err, _ = _run(["list", "--format", "csv", "--all", "--data-root", str(root)], True, monkeypatch)
    assert err.count("is a fragment") == 4, err


WHERES = [
    ("env == 'Hopper' and algo == 'sac'", ()),  # decided in SQL alone
    ("lr >= 0.001 and seed < 1 or env in ['Ant']", ("--all", "--columns", "index,env,last(return)")),
    ("last('return') > 10 and not (algo == 'td3')", ()),
    ("matches(env, 'H.*r') or seed + 1 == 2", ()),  # Python decides the candidates
    ("env == 'Nope'", ()),  # no match: the frame path says so
    ("nope == 1", ()),  # an unknown name: the frame path's error
]


def test_a_where_lists_the_same_bytes_streamed(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = [_same(db, monkeypatch, "--where", where, *options) for where, options in WHERES]
    assert taken == [True] * 4 + [False] * 2, taken


def test_a_where_over_every_kind_of_column_lists_the_same_bytes_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _mixed_root(tmp_path / "data")
    cases = [
        ("i >= 1", ()),
        ("s == 'plain' or b", ("--all",)),
        ("mixed == 1", ("--all",)),
        ("f > 0.1", ("--limit", "1")),
        ("i < 5 and f is not None", ("--all", "--limit", "2")),
    ]
    taken = [_same(root, monkeypatch, "--where", where, *options) for where, options in cases]
    assert sum(taken) >= 3, taken


def test_stored_time_steps_sqlite_cannot_print_exactly_are_written_by_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite prints reals with 15 digits and drops the sign of -0.0: those rows go to Python."""
    root = tmp_path / "data"
    when = dt.datetime(2026, 6, 1, 12, 0, 0)
    for i, step in enumerate([49000.0, -0.0, 0.0, 0.1 + 0.2, 1e16, -3.0, 7]):
        make_run(
            root,
            task="t",
            params={"a": i},
            curves={"r": [1.0]},
            steps=[step],
            when=when + dt.timedelta(hours=i),
        )
    assert _same(root, monkeypatch)
    _, out, _, _ = _run(["list", "--format", "csv", "--data-root", str(root)], True, monkeypatch)
    assert ",-0.0," in out and ",0.30000000000000004," in out and ",1e+16," in out, out
