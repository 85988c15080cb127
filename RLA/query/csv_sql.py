"""The lines of a streamed listing rendered by SQLite: one text per row, no Python per cell.

For each column of a :class:`RLA.query.csv_stream.Plan` an SQL expression gives the cell's text
exactly as pandas writes it, chosen from the column's kind and the types its values have in
the normal rows (the plan's survey):

* texts as they are, missing values and JSON ``null`` empty, booleans ``True``/``False``;
* numbers from the JSON text Python's :mod:`json` wrote (``repr`` of a float, the digits of an
  integer); an integer in a column of floats gets ``.0`` (``repr(float(n))`` for ``|n| < 1e15``);
* the stored ``time_step``/``n_rows`` numbers: integers as their digits; a float only when it
  is a non-zero integral value below ``1e15`` (``49000.0``), since SQLite prints other reals
  with 15 digits where Python prints the shortest exact form.

An expression is NULL where SQL cannot render the value exactly (a list, another float, a
value of an unexpected type), and so is the whole line of a row the plan builds by the
reference code (not ``exact``/``plain``, or ``running``). :mod:`RLA.query.csv_write` writes those
rows, and the lines holding a comma, a quote or a line break inside a cell (CSV quoting), the
Python way.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from RLA.query.csv_stream import TIMES, Plan, json_path
from RLA.query.expr import METRIC_FUNCS
from RLA.query.frame import metric_column

#: Rows whose stored columns are exactly the record's (the others are built in Python).
NORMAL = "exact AND plain AND status != 'running'"
_TEXTS = {"index": "idx", "task": "task", "status": "status", "host": "host", "ip": "ip", "parent": "parent"}
_TEXTS["param_source"] = "param_source"
SEPARATOR = " || ',' || "
#: ``repr(float(n))`` is ``str(n) + '.0'`` below this magnitude (and ``1e+16`` style above).
_DIGITS_LIMIT = "1e15"


def _number(column: str, kind: str) -> str:
    """A stored number column (``time_step``, ``n_rows``)."""
    integer = f"CAST({column} AS TEXT)"
    if kind == "float":
        integer = f"CASE WHEN abs({column}) < {_DIGITS_LIMIT} THEN {integer} || '.0' END"
    # -0.0 is stored as a REAL whose text loses the sign: zero goes to Python too
    real = (
        f"CASE WHEN {column} = CAST({column} AS INTEGER) AND {column} != 0 AND abs({column}) < {_DIGITS_LIMIT} "
        f"THEN CAST(CAST({column} AS INTEGER) AS TEXT) || '.0' END"
    )
    return (
        f"CASE typeof({column}) WHEN 'integer' THEN {integer} WHEN 'real' THEN {real} WHEN 'null' THEN '' END"
    )


def _json(source: str, path: str, kind: str, tags: Set[str]) -> Tuple[str, List[Any]]:
    """A JSON value of ``pjson``/``mjson`` at ``path``, as the column of ``kind`` writes it."""
    values = tags - {"na", "missing"}
    if not values:
        return "''", []
    if kind == "int":  # every normal row has an integer there
        return f"{source} -> ?", [path]
    if values == {"str"}:
        return f"ifnull({source} ->> ?, '')", [path]
    if values == {"float"} or (values == {"int"} and kind == "obj"):
        return f"ifnull(nullif({source} -> ?, 'null'), '')", [path]
    if values == {"int"}:  # integers (below 2**53 in exact rows) in a column of floats
        return f"ifnull(nullif({source} -> ?, 'null') || '.0', '')", [path]
    integer = f"({source} -> ?) || '.0'" if kind == "float" else f"{source} -> ?"
    sql = (
        f"CASE ifnull(json_type({source}, ?), 'null') WHEN 'null' THEN '' WHEN 'text' THEN {source} ->> ? "
        f"WHEN 'integer' THEN {integer} WHEN 'real' THEN {source} -> ? "
        "WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' END"
    )
    return sql, [path] * 4


def _cell(name: str, plan: Plan, metrics: Dict[str, str], roots: Dict[bool, str]) -> Tuple[str, List[Any]]:
    """The SQL text of column ``name``'s cell."""
    kind = plan.kinds.get(name, "obj")
    if name in TIMES:
        return f"ifnull(substr({name}, 1, {(10, 19, 23, 26)[plan.time_widths[name]]}), '')", []
    if name in _TEXTS:
        return f"ifnull({_TEXTS[name]}, '')", []
    if name in ("time_step", "n_rows"):
        return _number(name, kind), []
    if name == "archived":
        return "CASE archived WHEN 0 THEN 'False' ELSE 'True' END", []
    if name == "name":  # the key after ``[arc:]<task>/YYYY/MM/DD/`` (checked: else Python)
        start = "length(task) + 13 + 4 * archived"
        return f"CASE WHEN substr(key, {start} - 1, 1) = '/' THEN substr(key, {start}) END", []
    if name == "log_dir":
        return "CASE archived WHEN 0 THEN ? || key ELSE ? || substr(key, 5) END", [roots[False], roots[True]]
    tags = plan.tags.get(name, {"missing"})
    if name in plan.params:
        return _json("pjson", json_path(name), kind, tags)
    return _json("mjson", metrics[name], kind, tags)


def line_sql(plan: Plan, roots: Dict[bool, str]) -> Optional[Tuple[str, Tuple[Any, ...]]]:
    """The SQL expression (and its arguments) of a row's CSV line, NULL where Python must
    write it; None when every line goes through Python (one column: pandas quotes a lone
    empty cell; hyper-parameters shadowing base columns).

    Args:
        roots: the ``log/`` folders of active (False) and archived (True) runs, ending in ``/``.
    """
    if len(plan.columns) < 2 or plan.overrides:
        return None
    metrics = {
        metric_column(METRIC_FUNCS[i], metric): f"{json_path(metric)}[{i}]" for metric, i in plan.metrics
    }
    parts, args = [], []  # type: List[str], List[Any]
    for name in plan.columns:
        sql, more = _cell(name, plan, metrics, roots)
        parts.append(f"({sql})")  # '->' binds like '||': each cell in parentheses
        args += more
    return f"CASE WHEN {NORMAL} THEN {SEPARATOR.join(parts)} END", tuple(args)
