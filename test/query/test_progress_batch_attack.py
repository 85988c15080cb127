"""Hostile ``progress.csv`` bodies read in batches give exactly the numbers of one read per file.

Each scenario is a few files sharing one header (so they are candidates for one joined
parse, :mod:`RLA.query.progress_batch`); :func:`read_tables` must give, file by file, the
table of :func:`read_one` over the file's complete lines (same columns, dtypes, bits, NaN
positions, or the same error), and ``load_curves`` must give the frame it gives with
batching disabled.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd
import pytest

from RLA.logger.readers import complete_lines
from RLA.query import load_curves, progress_batch
from RLA.query.progress_batch import read_one, read_tables
from RLA.query.testing import make_run

HEADER = b"time-step,return,loss\n"
PLAIN = b"0,1.5,2\n10,2.5,3\n"
SCENARIOS: Dict[str, List[Optional[bytes]]] = {
    "no newline at the end": [PLAIN, b"1,2,3\n4,5,6", b"7,8,9"],
    "a BOM before the body": [PLAIN, b"\xef\xbb\xbf1,2,3\n"],
    "rows of only commas": [PLAIN, b",,\n1,2,3\n,,\n", b",,\n"],
    "fewer and more fields": [PLAIN, b"1\n2,3\n", b"1,2,3\n4,5,6,7\n"],
    "exponents at the edge": [b"1e308,1e308,-1e308\n", b"1e309,-1e309,4.9e-324\n2e-400,1E+5,1e-5\n"],
    "hex floats and underscores": [PLAIN, b"0x10,1,2\n", b"1_000,1,2\n"],
    "nan and inf spellings": [
        PLAIN,
        b"nan,NaN,-nan\ninf,-inf,+inf\nInfinity,-Infinity,NA\n",
        b"iNf,nAn,Inf\n",
    ],
    "leading plus and signed zeros": [b"+1.5,+2.5,+0\n", b"-0,0,-0.0\n", PLAIN],
    "thousands separators": [PLAIN, b"1,000,2\n"],
    "a very long line": [PLAIN, b",".join([b"1"] * 3) + b"\n" + b"9" * 5000 + b",1,2\n"],
    "empty and header-only files": [PLAIN, None, b"", PLAIN],
    "integers at the float limit": [b"0.5,1,2\n", b"9007199254740993,1,2\n18014398509481985,1,2\n", PLAIN],
}


def _write(root: Path, bodies: List[Optional[bytes]]) -> List[Path]:
    paths = []
    for k, body in enumerate(bodies):
        path = root / f"{k}.csv"
        path.write_bytes(HEADER if body is None else HEADER + body)
        if body == b"":
            path.write_bytes(b"")  # a 0-byte file (None: header only)
        paths.append(path)
    return paths


def _same_table(got: Any, want: Any) -> None:
    assert type(got) is type(want)
    if not isinstance(want, dict):
        assert str(got) == str(want)
        return
    assert list(got) == list(want)
    for column in want:
        assert got[column].dtype == want[column].dtype
        assert got[column].tobytes() == want[column].tobytes(), column  # NaN places, signed zeros


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_batch_gives_the_tables_of_one_read_per_file(tmp_path: Path, name: str) -> None:
    paths = _write(tmp_path, SCENARIOS[name])
    columns = ["time-step", "return", "loss"]
    for path, got in zip(paths, read_tables(paths, columns)):
        _same_table(got, read_one(path, complete_lines(path), columns))


def test_load_curves_is_the_same_with_batching_disabled(tmp_path: Path, monkeypatch: Any) -> None:
    dirs, names = [], []
    for number, bodies in enumerate(SCENARIOS.values()):
        for k, body in enumerate(bodies):
            layout = make_run(tmp_path, task=f"s{number}", params={"seed": k}, curves={"return": [0.0]})
            (layout.log_dir / "progress.csv").write_bytes(HEADER + (body or b""))
            dirs.append(layout.log_dir)
            names.append(f"s{number}-{k}")
    runs = pd.DataFrame({"index": names, "log_dir": dirs})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = load_curves(runs, ["return", "loss"], strict=False)
        monkeypatch.setattr(progress_batch, "_plain_rows", lambda path, data: None)
        alone = load_curves(runs, ["return", "loss"], strict=False)
    assert batched.attrs["skipped"] == alone.attrs["skipped"]
    pd.testing.assert_frame_equal(batched, alone, check_exact=True)
    for column in batched.columns[2:]:
        assert np.asarray(batched[column]).tobytes() == np.asarray(alone[column]).tobytes()
