"""load_curves (one frame built at the end, numbers taken without a to_numeric pass) returns
exactly the frame of the former per-run implementation, kept here as the reference."""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence

import numpy as np
import pandas as pd
import pytest

from RLA.query import load_curves
from RLA.query.curves import _sources, read_progress
from RLA.query.testing import make_run
from RLA.safe_read import UnreadableFileError

#: progress.csv bodies written over generated runs: numbers, text, gaps, inf, torn lines ...
CRAFTED = [
    b"time-step,return,loss\n0,1.5,3\n10,2.25,4\n20,,5\n30,inf,6\n40,0.1,7\n",
    b"time-step,return,loss\n0,1,x\n5,not-a-number,2\n7,3.000000000000001,1e308\n",
    b"time-step,return\n0,1\n1,2\n2,3",  # torn last line
    b"return,time-step,extra\n0.3,1e3,a\n0.7,2e3,b\n-1e-320,3e3,c\n",
    b"time-step,loss\n0,1\n1,2\n",  # no return column
    b"time-step,return\n",  # header only
    b"",  # empty file
    b"time-step,return\n0,1\n\x00\x01,2\n",  # binary: skipped
    b'time-step,return,"a ""quoted"",name"\n1,2,3\n"4",5,6\n',
    b"time-step,return\nnan,1\n3,-inf\n18446744073709551615,2\n-5,0.30000000000000004\n",
    b"time-step,return,return\n1,2,3\n4,5,6\n",  # a duplicated column name
    b"time-step,return\n1,2\n",  # replaced by no file at all
]


def reference(runs: Any, metrics: Any, x: str = "time-step", x_bound: Optional[Any] = None) -> Any:
    """The former load_curves loop (strict checks left out): one DataFrame per run and metric."""
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    pieces: List[Any] = []
    skipped = []
    for index, log_dir in _sources(runs):
        try:
            # The one change: each column once (a metric named twice made an empty file's
            # frame hold a duplicated column, and the old loop crashed on it).
            frame = read_progress(log_dir, list(dict.fromkeys([x] + metrics)))
        except UnreadableFileError as exc:
            skipped.append((index, f"corrupt progress.csv: {exc.reason}"))
            continue
        if x not in frame.columns:
            continue
        xs = pd.to_numeric(frame[x], errors="coerce").to_numpy(dtype=float)
        for metric in metrics:
            if metric not in frame.columns or metric == x:
                continue
            ys = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
            keep = np.isfinite(xs) & np.isfinite(ys)
            if x_bound is not None:
                low, high = x_bound if isinstance(x_bound, (tuple, list)) else (-np.inf, x_bound)
                keep &= (xs >= low) & (xs <= high)
            if keep.any():
                pieces.append(
                    pd.DataFrame({"index": index, "metric": metric, x: xs[keep], "value": ys[keep]})
                )
    if not pieces:
        return None, skipped
    return pd.concat(pieces, ignore_index=True), skipped


def _same(runs: Any, metrics: Sequence[str], **kwargs: Any) -> None:
    expected, skipped = reference(runs, metrics, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = load_curves(runs, metrics, strict=False, **kwargs)
    assert got.attrs["skipped"] == skipped
    if expected is None:
        assert got.empty
        return
    assert list(got.columns) == list(expected.columns)
    assert list(got.dtypes) == list(expected.dtypes)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    for column in got.columns[2:]:  # bit for bit (signed zeros, subnormals)
        assert got[column].to_numpy().tobytes() == expected[column].to_numpy().tobytes()


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The runs as a frame with ``index`` and ``log_dir`` (list_runs itself leaves damaged ones out)."""
    tmp_path = tmp_path_factory.mktemp("curves")
    dirs = []
    rng = np.random.default_rng(7)
    for seed in range(6):  # generated curves: random floats at full precision
        values = list(rng.normal(size=50) * 10.0 ** rng.integers(-5, 6, size=50))
        layout = make_run(
            tmp_path, task="t", params={"seed": seed}, curves={"return": values, "loss": values[::-1]}
        )
        dirs.append(layout.log_dir)
    for number, body in enumerate(CRAFTED):
        layout = make_run(tmp_path, task="t", params={"seed": 100 + number}, curves={"return": [0.0]})
        (layout.log_dir / "progress.csv").write_bytes(body)
        dirs.append(layout.log_dir)
    (dirs[-1] / "progress.csv").unlink()  # and one run without a progress.csv
    return pd.DataFrame({"index": [f"run{n}" for n in range(len(dirs))], "log_dir": dirs})


@pytest.mark.parametrize(
    "metrics, kwargs",
    [
        (["return"], {}),
        (["return", "loss"], {}),
        (["loss", "return", "return"], {}),
        (["return", "time-step"], {}),
        (["return"], {"x_bound": 25}),
        (["return", "loss"], {"x_bound": (5, 1e3)}),
        (["return"], {"x_bound": [0, 0]}),
        (["time-step"], {"x": "return"}),
        (["return"], {"x": "loss"}),
        (["return"], {"x": "index"}),
        (["nothing"], {}),
    ],
)
def test_fast_load_curves_gives_the_reference_frame(crafted: Any, metrics: List[str], kwargs: Any) -> None:
    _same(crafted, metrics, **kwargs)


#: Runs whose files share a header are parsed in one batch (RLA.query.progress_batch). Each
#: scenario is its own header of three columns (a batch that falls back to one parse per file
#: would hide the others), with a plain partner file first: ``(name, [bodies in source order])``.
PLAIN = b"0,1.5\n10,2.5\n20,3.5\n"
BATCHED = [
    ("first row longer than the header (pandas: an index column)", [PLAIN, b"0,1,2,99\n1,2\n"]),
    ("-0 in a file of integers, floats in another", [b"0.5,1\n1,2\n", b"0,1\n-0,2\n"]),
    ("integers beyond 2**53 beside floats", [b"0.5,1\n", b"9007199254740993,1\n18014398509481985,2\n"]),
    ("a header line again mid-file (text)", [PLAIN, b"0,1\ntime-step,return\n1,2\n"]),
    ("text-like cells made of number letters", [PLAIN, b"0,1\n1,e\n2,nana\n"]),
    (
        "nan/inf spellings and empty cells",
        [PLAIN, b"1,NaN\n2,-inf\n3,Infinity\n4,nan\n5,NA\n6,\n,7\n8,inf\n"],
    ),
    ("blank lines", [b"\n0,1\n\n\n2,3\n\n", PLAIN, b"5,6\n\n"]),
    ("a torn last line", [PLAIN, b"1,2\n3,4"]),
    ("rows shorter and longer than the header", [PLAIN, b"1,2\n3\n4,5,6,7\n7,8\n"]),
    ("CRLF line ends", [PLAIN, b"1,2\r\n3,4\r\n"]),
    ("spaces", [PLAIN, b" 1, 2\n3 ,4\n"]),
    ("header only", [PLAIN, b"", PLAIN]),
    ("exponents and signs", [b"1e3,+5\n-2.5E-3,1.\n", b".5,-.25\n7,1e-320\n"]),
    ("quoted cells", [PLAIN, b'1,"2"\n3,4\n']),
    ("binary", [PLAIN, b"1,\x002\n"]),
    ("many files", [PLAIN, b"1,2\n", b"3,4\n5,6\n", b"", b"7,8\n"] * 3),
]


@pytest.fixture(scope="module")
def batched(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One frame of runs (``index``, ``log_dir``) per scenario of BATCHED."""
    tmp_path = tmp_path_factory.mktemp("batched")
    frames = {}
    for number, (name, bodies) in enumerate(BATCHED):
        header = (
            f"time-step,return,s{number}\n".encode()
            if number % 2
            else f"return,time-step,s{number}\n".encode()
        )
        dirs = []
        for k, body in enumerate(bodies):
            layout = make_run(tmp_path, task=f"b{number}", params={"seed": k}, curves={"return": [0.0]})
            (layout.log_dir / "progress.csv").write_bytes(header + body)
            dirs.append(layout.log_dir)
        frames[name] = pd.DataFrame({"index": [f"b{number}-{k}" for k in range(len(dirs))], "log_dir": dirs})
    return frames


@pytest.mark.parametrize("name", [name for name, _ in BATCHED])
def test_files_read_in_one_batch_give_the_numbers_of_one_read_each(batched: Any, name: str) -> None:
    _same(batched[name], ["return"])
    _same(batched[name], ["time-step"], x="return")


def test_all_scenarios_in_one_call_give_the_reference_frame(batched: Any, crafted: Any) -> None:
    _same(pd.concat([crafted, *batched.values()], ignore_index=True), ["return", "loss"])


def _plain_runs(root: Any, count: int) -> Any:
    dirs = []
    for k in range(count):
        layout = make_run(root, task="plain", params={"seed": k}, curves={"return": [0.0]})
        (layout.log_dir / "progress.csv").write_bytes(b"time-step,return\n" + PLAIN * (k + 1))
        dirs.append(layout.log_dir)
    return pd.DataFrame({"index": [f"p{k}" for k in range(count)], "log_dir": dirs})


def test_each_file_is_read_once_and_a_later_change_is_not_mixed_in(tmp_path: Any, monkeypatch: Any) -> None:
    """A file that changes (widened, other numbers) right after it was read: its numbers are
    those of the bytes read, each file is read once, and the other files are unaffected."""
    from RLA.query import progress_batch

    runs = _plain_runs(tmp_path, 4)
    expected, _ = reference(runs, ["return"])
    reads: List[str] = []
    real = progress_batch.complete_lines

    def read_then_change(path: Any) -> bytes:
        data = real(path)
        reads.append(str(path))
        with open(path, "wb") as changed:
            changed.write(b"time-step,return,extra\n9,9,9\n")
        return data

    monkeypatch.setattr(progress_batch, "complete_lines", read_then_change)
    got = load_curves(runs, ["return"], strict=False)
    assert sorted(reads) == sorted(str(d / "progress.csv") for d in runs["log_dir"])
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_plain_files_with_one_header_are_parsed_once(tmp_path: Any, monkeypatch: Any) -> None:
    runs = _plain_runs(tmp_path, 6)
    expected, _ = reference(runs, ["return"])
    calls: List[int] = []
    real = pd.read_csv

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", counted)
    got = load_curves(runs, ["return"])
    assert len(calls) == 1
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_a_batch_joins_only_files_with_the_same_header(tmp_path: Any) -> None:
    from RLA.query.progress_batch import read_tables

    first, second, third = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    first.write_bytes(b"x,y\n1,2\n")
    second.write_bytes(b"y,x\n3,4\n")
    third.write_bytes(b"x,y\n5,6\n7,8\n")
    outcomes = read_tables([first, second, third, tmp_path / "missing.csv"], ["x", "y"])
    tables = [t for t in outcomes if isinstance(t, dict)]
    assert len(tables) == len(outcomes)
    assert [list(t["x"]) for t in tables] == [[1.0], [4.0], [5.0, 7.0], []]
    assert [list(t["y"]) for t in tables] == [[2.0], [3.0], [6.0, 8.0], []]


def test_batches_are_cut_at_the_byte_cap(tmp_path: Any, monkeypatch: Any) -> None:
    from RLA.query import progress_batch

    runs = _plain_runs(tmp_path, 12)  # 38 to 236 bytes each
    expected, _ = reference(runs, ["return"])
    monkeypatch.setattr(progress_batch, "MAX_BATCH_BYTES", 500)
    calls: List[int] = []
    real = pd.read_csv

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pd, "read_csv", counted)
    got = load_curves(runs, ["return"])
    assert 3 <= len(calls) < 12
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
