"""Hostile names and values against the streamed listing and the SQL ``where`` (issue #23).

The Python evaluator is the reference for which runs a ``where`` selects; names reach SQL only
as arguments, never as SQL text.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from RLA.query import Catalog
from RLA.query.expr import parse_query
from RLA.query.pushdown import matching_keys
from RLA.query.testing import make_run


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
