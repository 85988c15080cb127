"""Refuse a query naming a hyper-parameter or metric no run in scope has ("did you mean").

The names are looked up in the index (:mod:`RLA.query.index_file`) with SQLite's JSON
functions: each name costs a scan that stops at the first run having it; the full list of
names (for the hint) is built only when a name is unknown.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Optional, Tuple

from RLA.errors import QueryError
from RLA.query.catalog import Catalog
from RLA.query.expr import Query
from RLA.query.records import RunRecord
from RLA.query.stored import addressable, decode

#: Run columns a query may name (hyper-parameters of the same name shadow them).
RUN_COLUMNS = (
    "index",
    "task",
    "date",
    "name",
    "record_date",
    "status",
    "host",
    "ip",
    "start_time",
    "end_time",
    "archived",
    "parent",
    "time_step",
    "n_rows",
    "param_source",
)


def known_names(
    catalog: Catalog, task: Optional[str], archived: Optional[bool], damaged: Iterable[RunRecord]
) -> Tuple[set, set]:
    """Every hyper-parameter/run column name and every metric of the runs in scope."""
    scope, args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    names: set = set(RUN_COLUMNS)
    metrics: set = set()
    for column, into in (("pjson", names), ("mjson", metrics)):
        into.update(
            name
            for (name,) in catalog.conn.execute(
                f"SELECT DISTINCT j.key FROM runs, json_each(runs.{column}) AS j WHERE {scope}", args
            )
        )
    for record in damaged:
        names.update(record.params)
        metrics.update(record.metrics)
    # names SQLite's JSON cannot address are only in the stored records
    for (text,) in catalog.conn.execute(f"SELECT record FROM runs WHERE exact = 0 AND {scope}", args):
        stored = decode(text)
        if stored is not None:
            names.update(stored.params)
            metrics.update(stored.metrics)
    return names, metrics


def _has(catalog: Catalog, column: str, name: str, scope: str, args: Tuple[Any, ...]) -> bool:
    return addressable(name) and bool(
        catalog.conn.execute(
            f"SELECT EXISTS(SELECT 1 FROM runs WHERE {scope} AND json_type({column}, ?) IS NOT NULL)",
            args + (f'$."{name}"',),
        ).fetchone()[0]
    )


def check_query_names(
    catalog: Catalog,
    query: Query,
    task: Optional[str],
    archived: Optional[bool],
    damaged: Iterable[RunRecord],
) -> None:
    """:func:`check_names` against the scope, in SQL (every name is looked up with an index
    scan that stops at the first run having it); the full name list is built only for the error."""
    damaged = list(damaged)
    scope, args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    names_ok = all(
        name in RUN_COLUMNS
        or _has(catalog, "pjson", name, scope, args)
        or any(name in r.params for r in damaged)
        for name in query.names
    )
    metrics_ok = all(
        _has(catalog, "mjson", m, scope, args) or any(m in r.metrics for r in damaged) for m in query.metrics
    )
    if not (names_ok and metrics_ok):
        check_names(query, known_names(catalog, task, archived, damaged))


def check_names(query: Query, known: Tuple[set, set]) -> None:
    """Refuse a query naming a hyper-parameter or metric that no run in scope has.

    Args:
        known: the names and metrics of the runs in scope (:func:`_known_names`).

    Raises:
        QueryError: with a "did you mean" hint and a caret under the name.
    """
    from RLA.query.expr import caret

    names, metrics = known
    for name in sorted(query.names - names):
        close = difflib.get_close_matches(name, sorted(names), n=1)
        error = QueryError(
            f"Unknown name {name!r} in query",
            expected="a hyper-parameter or run column "
            f"({', '.join(sorted(names)[:12])}{' ...' if len(names) > 12 else ''})",
            found=caret(query.text, query.position(name)),
            fix=(f"did you mean {close[0]!r}; " if close else "check the spelling; ")
            + "`rla list` shows the columns",
        )
        error.position = query.position(name)
        raise error
    for metric in sorted(query.metrics - metrics):
        close = difflib.get_close_matches(metric, sorted(metrics), n=1)
        error = QueryError(
            f"No run in the selection has the metric {metric!r}",
            expected=f"one of {', '.join(sorted(metrics)) or '(no metrics logged)'}",
            found=caret(query.text, query.position(metric)),
            fix=f"did you mean {close[0]!r}" if close else "check the metric name",
        )
        error.position = query.position(metric)
        raise error
