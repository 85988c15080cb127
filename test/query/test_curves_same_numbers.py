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
