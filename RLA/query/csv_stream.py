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

from RLA.query.expr import METRIC_FUNCS
from RLA.query.frame import BASE_COLUMNS, metric_column

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


def _surveys(
    catalog: Any, scope: str, args: Tuple[Any, ...]
) -> Tuple[int, Dict[str, Set[str]], Dict[str, int]]:
    """``(normal rows, {column: tags}, {param: rows having it})`` over the normal rows."""
    normal = f"{scope} AND exact AND plain AND status != 'running'"
    conn = catalog.conn
    count = int(conn.execute(f"SELECT count(*) FROM runs WHERE {normal}", args).fetchone()[0])
    tags: Dict[str, Set[str]] = {}
    having: Dict[str, int] = {}
    for key, kind, n in conn.execute(
        f"SELECT j.key, j.type, count(*) FROM runs, json_each(runs.pjson) j WHERE {normal} GROUP BY 1, 2",
        args,
    ):
        tags.setdefault(f"p:{key}", set()).add(_JSON_TAGS[kind])
        having[key] = having.get(key, 0) + n
    rows_with: Dict[str, int] = {}
    for metric, position, kind, n in conn.execute(
        f"SELECT j.key, k.key, k.type, count(*) FROM runs, json_each(runs.mjson) j, json_each(j.value) k "
        f"WHERE {normal} GROUP BY 1, 2, 3",
        args,
    ):
        tags.setdefault(f"m:{metric}:{position}", set()).add(_JSON_TAGS[kind])
        if position == 0:
            rows_with[metric] = rows_with.get(metric, 0) + n
    for metric, n in rows_with.items():
        if n < count:
            for position in range(len(METRIC_FUNCS)):
                tags.setdefault(f"m:{metric}:{position}", set()).add("missing")
    for key, n in having.items():
        if n < count:
            tags[f"p:{key}"].add("missing")
    return count, tags, having


_TYPEOF = {"text": "str", "integer": "int", "real": "float", "null": "na"}
_CONSTANT = {"index": "str", "task": "str", "status": "str", "name": "str", "log_dir": "str"}
_CONSTANT.update({"archived": "bool", "param_source": "str"})
_TYPED = ("host", "ip", "parent", "time_step", "n_rows")


def _surveyed(
    catalog: Any, scope: str, args: Tuple[Any, ...]
) -> Tuple[int, Dict[str, Set[str]], Dict[str, int], Dict[str, Set[str]]]:
    """:func:`_surveys` and :func:`_base_tags` of the normal rows, remembered in the index's
    ``meta`` table for the current generation (any change to a stored run bumps it), so the
    next listing of the same scope skips the scans."""
    key = "csv_survey:" + json.dumps([scope, list(args)])
    generation = catalog.generation
    row = catalog.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is not None:
        saved = json.loads(row[0])
        if saved["generation"] == generation:
            sets = {name: set(found) for name, found in saved["tags"].items()}
            base = {name: set(found) for name, found in saved["base"].items()}
            return saved["count"], sets, saved["having"], base
    count, tags, having = _surveys(catalog, scope, args)
    base = _base_tags(catalog, f"{scope} AND exact AND plain AND status != 'running'", args)
    value = {"generation": generation, "count": count, "having": having}
    value["tags"] = {name: sorted(found) for name, found in tags.items()}
    value["base"] = {name: sorted(found) for name, found in base.items()}
    if catalog.file.begin():  # a cache: skipped when the file cannot be written now
        catalog.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))
        catalog.file.commit(False)
    return count, tags, having, base


def _base_tags(catalog: Any, where: str, args: Tuple[Any, ...]) -> Dict[str, Set[str]]:
    """Tags of every base column over the normal rows selected by ``where`` (one scan)."""
    tags: Dict[str, Set[str]] = {name: set() for name in list(_CONSTANT) + list(_TYPED)}
    sql = f"SELECT {', '.join(f'typeof({c})' for c in _TYPED)} FROM runs WHERE {where} GROUP BY 1, 2, 3, 4, 5"
    for types in catalog.conn.execute(sql, args):
        for name, kind in zip(_TYPED, types):
            tags[name].add(_TYPEOF[kind])
        for name, kind in _CONSTANT.items():
            tags[name].add(kind)
    return tags


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
) -> Optional[Plan]:
    """How to write the scope's listing (call after ``catalog.refresh``); None: use the frame.

    Args:
        catalog: the refreshed :class:`RLA.query.Catalog`.
        task, archived: the scope (as :meth:`Catalog.refresh`).
        columns: only these columns (``rla list --columns``); None: every column.
        limit: the first ``limit`` runs of the listing.
    """
    scope, args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    total, foreign, short, long = catalog.conn.execute(
        "SELECT count(*), sum(tz != ?), min(min(length(start_time)), min(length(end_time))), "
        f"max(max(length(start_time)), max(length(end_time))) FROM runs WHERE {scope}",
        (tz_signature(),) + args,
    ).fetchone()
    if not total or foreign or (short is not None and short != long):
        return None  # nothing to list, times of another zone, or years before 1000
    special, special_params, special_metrics = _special_items(catalog, scope, args)
    count, tags, having, base = _surveyed(catalog, scope, args)
    param_keys = set(having) | special_params
    metrics = sorted({key[2:].rpartition(":")[0] for key in tags if key[0] == "m"} | special_metrics)
    summaries = [metric_column(func, metric) for metric in metrics for func in METRIC_FUNCS]
    if param_keys & (set(TIMES) | set(summaries)):
        return None  # a hyper-parameter shadowing a time or a metric summary: the frame decides
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
    normal = f"{scope} AND exact AND plain AND status != 'running'"
    for name in names:
        found = _column_tags(catalog, name, out, tags, base if count else {}, normal)
        found |= {_tag(item.get(name, MISSING)) for item in special.values()}
        out.kinds[name] = _kind(found)
    out.time_widths = _time_widths(catalog, scope, args, limit)
    return out


def _column_tags(
    catalog: Any, name: str, plan: Plan, tags: Dict[str, Set[str]], base: Dict[str, Set[str]], normal: str
) -> Set[str]:
    """The tags of column ``name`` over the normal rows (``base``: of the base columns; empty
    when there is no normal row)."""
    if not base or name in TIMES:
        return set()
    if name in BASE_COLUMNS:
        if name not in plan.overrides:
            return base[name]
        lacking = _base_tags(catalog, f"{normal} AND pjson -> ? IS NULL", plan.args + (json_path(name),))
        return (tags.get(f"p:{name}", set()) - {"missing"}) | lacking[name]
    if name in plan.params:
        return tags.get(f"p:{name}", {"missing"})
    func = name.partition("(")[0]
    metric = name[len(func) + 1 : -1]
    return tags.get(f"m:{metric}:{METRIC_FUNCS.index(func)}", {"missing"})
