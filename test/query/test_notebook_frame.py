"""``list_runs`` returns a real DataFrame whose notebook view (``_repr_html_``) reads well:
useful columns first, times to the second, no column empty for every run, ``-`` for a gap."""
from __future__ import annotations

import datetime as dt
import html
import re
from html.parser import HTMLParser
from typing import List

import pandas as pd
import pytest

from RLA.query import list_runs, rows_to_frame, select_runs
from RLA.query.display import RunFrame
from RLA.query.testing import make_run

pytestmark = pytest.mark.timeout(60)


class _Cells(HTMLParser):
    """Header names and body rows of a pandas HTML table."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: List[str] = []
        self.rows: List[List[str]] = []
        self._where = ""
        self._text: List[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("thead", "tbody"):
            self._where = tag
        elif tag == "tr" and self._where == "tbody":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._text = []

    def handle_data(self, data):
        self._text.append(data)

    def handle_endtag(self, tag):
        text = html.unescape("".join(self._text)).strip()
        if tag == "th" and self._where == "thead":
            self.headers.append(text)
        elif tag == "td":
            self.rows[-1].append(text)


def _parse(markup: str) -> _Cells:
    cells = _Cells()
    cells.feed(markup)
    return cells


@pytest.fixture
def runs(tmp_path):
    """4 runs over lr x seed, one without lr; nobody has a parent; microsecond start times."""
    root = tmp_path / "data"
    for i, (lr, seed) in enumerate([(1e-3, 0), (1e-3, 1), (1e-4, 0), (None, 1)]):
        params = {"algo": "sac", "seed": seed, **({"lr": lr} if lr is not None else {})}
        make_run(root, task="demo", params=params, curves={"return": [0.0, 1.0 + i]},
                 when=dt.datetime(2026, 11, 25, 14, 3, 7 + i, 123456))
    return root


def test_list_runs_is_a_real_dataframe_with_every_column_and_typed_times(runs):
    frame = list_runs(runs)
    assert isinstance(frame, pd.DataFrame) and isinstance(frame, RunFrame)
    plain = rows_to_frame(select_runs(runs).runs)
    pd.testing.assert_frame_equal(pd.DataFrame(frame), plain)
    assert pd.api.types.is_datetime64_any_dtype(frame["start_time"])
    assert frame.attrs["param_columns"] == ["algo", "lr", "seed"]


def test_html_shows_useful_columns_first_and_no_empty_column(runs):
    frame = list_runs(runs)
    cells = _parse(frame._repr_html_())
    names = [h for h in cells.headers if h]
    assert names[:6] == ["index", "status", "start_time", "lr", "seed", "last(return)"]
    assert "algo" in names  # the same for every run: shown, after the useful ones
    assert "parent" in frame.columns and "parent" not in names  # empty for every run
    assert names[-1] != "index" and len(cells.rows) == 4


def test_html_times_are_to_the_second_and_gaps_are_a_dash(runs):
    frame = list_runs(runs)
    markup = frame._repr_html_()
    cells = _parse(markup)
    names = [h for h in cells.headers if h]
    starts = [row[names.index("start_time")] for row in cells.rows]
    assert starts == [f"2026-11-25 14:03:{7 + i:02d}" for i in range(4)]
    assert not re.search(r"14:03:\d\d\.", markup) and "NaN" not in markup and "NaT" not in markup
    lrs = [row[names.index("lr")] for row in cells.rows]
    assert lrs[3] == "-" and float(lrs[0]) == 1e-3


def test_pandas_operations_keep_the_type_and_the_view(runs):
    frame = list_runs(runs)
    part = frame[frame["seed"] == 1].sort_values("start_time")
    assert isinstance(part, RunFrame) and len(part) == 2
    names = [h for h in _parse(part._repr_html_()).headers if h]
    assert names[:3] == ["index", "status", "start_time"] and "lr" in names
    picked = frame[["seed", "index"]]
    assert [h for h in _parse(picked._repr_html_()).headers if h] == ["index", "seed"]


def test_html_honours_pandas_display_options(runs):
    frame = list_runs(runs)
    with pd.option_context("display.max_rows", 2):
        markup = frame._repr_html_()
    assert "..." in markup or "…" in markup
    with pd.option_context("display.notebook_repr_html", False):
        assert frame._repr_html_() is None
