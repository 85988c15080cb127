"""``rla list --format csv`` of a whole scope, written straight from the index's columns.

The reference path builds a frame of every run (:func:`RLA.query.frame.rows_to_frame`) and lets
pandas write it: at 100,000 runs that is 100,000 decoded JSON records and a 100,000-row frame.
Here the rows stream out of SQLite in the listing's order (newest first) and each cell is
formatted as pandas would format that column, so the bytes are the same:

* a column's kind is decided first, over every row of the scope, from the types its values have
  (SQLite's ``json_each``/``typeof`` over the stored columns): integers only and none missing ->
  ``str``; numbers (with an integer among floats or a missing cell) -> ``repr(float)``, missing
  -> empty; anything else (texts, booleans, lists, mixed) -> ``str`` of the value, missing empty;
* times are written with the column's finest non-zero resolution (date only, seconds,
  milliseconds or microseconds), as pandas does.

Rows whose stored columns are not exactly the record's (``exact``/``plain`` unset: NaN,
integers beyond 2**53, keys SQLite's JSON paths cannot reach, ...) and ``running`` rows (their
status depends on the clock) are decoded and built by the reference code, one row at a time.
When the listing cannot be written exactly this way (rows indexed in another time zone, a
hyper-parameter named like a time column or a metric summary, years before 1000) :func:`plan`
returns None and the caller takes the reference path.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from RLA.query.csv_survey import Survey, base_tags_without, survey
from RLA.query.expr import METRIC_FUNCS
from RLA.query.frame import BASE_COLUMNS, metric_column
from RLA.query.stored import addressable

#: A cell the run does not have (pandas fills it with NaN).
MISSING = object()
_JSON_TAGS = {"integer": "int", "real": "float", "text": "str", "true": "bool", "false": "bool"}
_JSON_TAGS.update({"null": "na", "array": "tuple", "object": "dict"})
TIMES = ("start_time", "end_time")
BATCH = 2000


def tz_signature() -> str:
    """The local time rules of this process (stored times are local: another zone re-reads)."""
    return f"{os.environ.get('TZ', '')}|{time.tzname}|{time.timezone}|{time.altzone}"


def _tag(value: Any) -> str:
    if value is MISSING or value is None or (isinstance(value, float) and math.isnan(value)):
        return "na"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -(2**63) <= value < 2**63 else "big"
    return {float: "float", str: "str", tuple: "tuple"}.get(type(value), "other")


def _kind(tags: Set[str]) -> str:
    """How pandas writes a column whose values have ``tags`` (see the module docstring)."""
    values = tags - {"na", "missing"}
    if values and values <= {"int"} and values == tags:
        return "int"
    if values and values <= {"int", "float"}:
        return "float"
    return "obj"


def cell(kind: str, value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if kind == "float":
        number = float(value)
        return "" if math.isnan(number) else repr(number)
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


def json_value(text: Optional[str]) -> Any:
    """A cell of ``pjson``/``mjson`` (JSON text from SQLite's ``->``) as Python sees it."""
    if text is None:
        return MISSING
    first = text[0]
    if first == '"':
        return text[1:-1] if "\\" not in text else json.loads(text)
    if text == "true" or text == "false":
        return text == "true"
    if text == "null":
        return None
    if first == "[" or first == "{":
        value = json.loads(text)
        return tuple(value) if isinstance(value, list) else value
    return int(text) if text.lstrip("-").isdigit() else float(text)


@dataclass
class Plan:
    """What :func:`write` needs: the columns, their kinds, and the row query."""

    columns: List[str]
    kinds: Dict[str, str]
    params: List[str]
    metrics: List[Tuple[str, int]]
    where: str
    args: Tuple[Any, ...]
    limit: Optional[int]
    time_widths: Dict[str, int] = field(default_factory=dict)
    #: Base columns some run has a hyper-parameter of the same name for (its value wins).
    overrides: List[str] = field(default_factory=list)
    #: ``{key: {column: value}}`` of the rows built by the reference code.
    special: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    #: The value tags of each column over the normal rows (:mod:`RLA.query.csv_sql` renders them).
    tags: Dict[str, Set[str]] = field(default_factory=dict)


def json_path(key: str) -> str:
    return '$."' + key + '"'


def _special_items(
    catalog: Any, scope: str, args: Tuple[Any, ...]
) -> Tuple[Dict[str, Dict[str, Any]], Set[str], Set[str]]:
    """The rows the stored columns cannot give exactly, built by the reference code
    (``{key: {column: value}}``), with their hyper-parameter and metric names."""
    from RLA.layout import LOG
    from RLA.query.frame import _static_item
    from RLA.query.records import read_record
    from RLA.query.selection import RunRow
    from RLA.query.stored import decode
    from RLA.query.tree import layout_of

    items: Dict[str, Dict[str, Any]] = {}
    params: Set[str] = set()
    metrics: Set[str] = set()
    sql = f"SELECT key, record FROM runs WHERE {scope} AND NOT (exact AND plain AND status != 'running')"
    for key, text in catalog.conn.execute(sql, args):
        layout = layout_of(catalog.data_root, key)
        record = decode(text) or read_record(layout, full_info=False)
        row = RunRow(layout, record)
        item = _static_item(row, os.fspath(layout.type_root(LOG)))
        item["status"] = row.status
        for metric, triple in record.metrics.items():
            for func in METRIC_FUNCS:
                item[metric_column(func, metric)] = triple[METRIC_FUNCS.index(func)]
        items[key] = item
        params.update(record.params)
        metrics.update(record.metrics)
    return items, params, metrics


#: rla list's default order: newest first (SQLite puts NULLs last in DESC), ties by index.
ORDER = "start_time DESC, idx, key"


def _time_widths(catalog: Any, scope: str, args: Tuple[Any, ...], limit: Optional[int]) -> Dict[str, int]:
    """The finest resolution among the written times of each time column (0 date .. 3 us)."""
    rows = f"SELECT start_time, end_time FROM runs WHERE {scope}"
    if limit is not None:
        rows += f" ORDER BY {ORDER} LIMIT {int(limit)}"
    flags = ", ".join(
        f"max(substr({c}, 12) != '00:00:00.000000'), max(substr({c}, 21) != '000000'), "
        f"max(substr({c}, 24) != '000')"
        for c in TIMES
    )
    found = catalog.conn.execute(f"SELECT {flags} FROM ({rows})", args).fetchone()
    widths = {}
    for i, column in enumerate(TIMES):
        clock, fraction, micro = found[3 * i : 3 * i + 3]
        widths[column] = 0 if not clock else 1 if not fraction else 2 if not micro else 3
    return widths


def plan(
    catalog: Any,
    task: Optional[str],
    archived: Optional[bool],
    columns: Optional[Sequence[str]] = None,
    limit: Optional[int] = None,
    where: Optional[Tuple[str, Sequence[Any]]] = None,
) -> Optional[Plan]:
    """How to write the scope's listing (call after ``catalog.refresh``); None: use the frame.

    Args:
        catalog: the refreshed :class:`RLA.query.Catalog`.
        task, archived: the scope (as :meth:`Catalog.refresh`).
        columns: only these columns (``rla list --columns``); None: every column.
        limit: the first ``limit`` runs of the listing.
        where: an SQL condition (and its arguments) selecting the rows listed, all in the scope
            (e.g. ``key IN (...)``); the scope itself is then not tested again.
    """
    if (limit is not None and limit < 0) or (columns is not None and not columns):
        return None  # head(-n) drops the last n; no column writes a line per run: the frame's way
    scope, args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    if where is not None:  # rows of the scope by construction: no scope test (keys are looked up)
        scope, args = where[0], tuple(where[1])
    found = survey(catalog, scope, args)
    if not found.total or found.foreign:
        return None  # nothing to list, times of another zone, or years before 1000
    special, special_params, special_metrics = (
        _special_items(catalog, scope, args) if found.special else ({}, set(), set())
    )
    tags, having = found.tags, found.having
    param_keys = set(having) | special_params
    metrics = sorted({key[2:].rpartition(":")[0] for key in tags if key[0] == "m"} | special_metrics)
    summaries = [metric_column(func, metric) for metric in metrics for func in METRIC_FUNCS]
    if param_keys & (set(TIMES) | set(summaries) | {"index"}):
        return None  # a hyper-parameter shadowing a sort key or a metric summary: the frame decides
    if not all(map(addressable, param_keys | set(metrics))):
        return None  # a name SQLite's JSON paths cannot reach (a quote, a backslash): no path for it
    params = sorted(k for k in param_keys if k not in BASE_COLUMNS)
    names = BASE_COLUMNS + params + summaries
    if columns is not None:
        if len(set(columns)) != len(columns) or not set(columns) <= set(names):
            return None
        names = list(columns)
    out = Plan(
        names, {}, params, [(m, i) for m in metrics for i in range(len(METRIC_FUNCS))], scope, args, limit
    )
    out.overrides = [b for b in BASE_COLUMNS if b in param_keys and b != "status"]
    out.special = special
    for name in names:
        out.tags[name] = _column_tags(name, out, found)
        every = out.tags[name] | {_tag(item.get(name, MISSING)) for item in special.values()}
        if "big" in every:
            return None  # an integer beyond int64: pandas' column type depends on its company
        out.kinds[name] = _kind(every)
    out.time_widths = (
        dict(zip(TIMES, found.widths)) if limit is None else _time_widths(catalog, scope, args, limit)
    )
    return out


def _column_tags(name: str, plan: Plan, found: Survey) -> Set[str]:
    """The tags of column ``name`` over the normal rows (empty when there is none)."""
    if not found.count or name in TIMES:
        return set()
    if name in BASE_COLUMNS:
        if name not in plan.overrides:
            return found.base[name]
        lacking = base_tags_without(found, name)
        return (found.tags.get(f"p:{name}", set()) - {"missing"}) | lacking[name]
    if name in plan.params:
        return found.tags.get(f"p:{name}", {"missing"})
    func = name.partition("(")[0]
    metric = name[len(func) + 1 : -1]
    return found.tags.get(f"m:{metric}:{METRIC_FUNCS.index(func)}", {"missing"})
