"""Writing the listing planned by :mod:`RLA.query.csv_stream`: a batch of rows at a time.

Each batch is transposed, each column formatted by one list comprehension for its kind, and
the lines joined directly unless a cell needs the csv module's quoting.
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from RLA.query.csv_stream import BATCH, MISSING, ORDER, TIMES, Plan, cell, json_path, json_value
from RLA.query.expr import METRIC_FUNCS
from RLA.query.frame import metric_column

Column = Callable[[List[tuple]], Sequence[str]]


def _column(kind: str, values: Sequence[Any], json_text: bool) -> Sequence[str]:
    """The cells of one column of a batch (``values``: SQL values, or JSON texts)."""
    if kind == "int" and json_text:
        return values  # every row has it, written by json.dumps: the text is str(int)
    if kind == "int":
        return [str(v) for v in values]
    if kind == "float":
        return ["" if v is None or v == "null" else repr(float(v)) for v in values]
    if json_text:
        return [
            t[1:-1] if t is not None and t[0] == '"' and "\\" not in t else cell(kind, json_value(t))
            for t in values
        ]
    return ["" if v is None else v if type(v) is str else cell(kind, v) for v in values]


def _columns(plan: Plan, data_root: Any) -> List[Column]:
    """One ``batch columns -> cells`` function per written column (positions of :func:`_select`)."""
    from RLA.layout import LOG, type_root

    roots = {flag: os.fspath(type_root(data_root, LOG, flag)) + "/" for flag in (False, True)}
    at = {"index": 1, "task": 2, "status": 3, "host": 6, "ip": 7, "parent": 9, "time_step": 10}
    at.update({"n_rows": 11, "param_source": 12})
    first = 13 + len(plan.overrides)
    position = {name: first + i for i, name in enumerate(plan.params)}
    for i, (metric, j) in enumerate(plan.metrics):
        position[metric_column(METRIC_FUNCS[j], metric)] = first + len(plan.params) + i
    out: List[Column] = []
    for name in plan.columns:
        kind = plan.kinds.get(name, "obj")
        if name in TIMES:
            out.append(_times((10, 19, 23, 26)[plan.time_widths[name]], TIMES.index(name) + 4))
        elif name in position:
            out.append(_json_column(kind, position[name]))
        elif name in plan.overrides:
            out.append(_override_column(kind, 13 + plan.overrides.index(name), _base_column(name, at, roots)))
        else:
            out.append(_stored_column(kind, _base_column(name, at, roots)))
    return out


def _times(width: int, at: int) -> Column:
    def cells(cols: List[tuple]) -> Sequence[str]:
        return ["" if t is None else t[:width] for t in cols[at]]

    return cells


def _json_column(kind: str, at: int) -> Column:
    def cells(cols: List[tuple]) -> Sequence[str]:
        return _column(kind, cols[at], True)

    return cells


def _override_column(kind: str, at: int, own: Callable[[List[tuple]], List[Any]]) -> Column:
    def cells(cols: List[tuple]) -> Sequence[str]:
        return _overridden(kind, cols[at], own(cols))

    return cells


def _stored_column(kind: str, own: Callable[[List[tuple]], List[Any]]) -> Column:
    def cells(cols: List[tuple]) -> Sequence[str]:
        return _column(kind, own(cols), False)

    return cells


def _base_column(name: str, at: Dict[str, int], roots: Dict[bool, str]) -> Callable[[List[tuple]], List[Any]]:
    """A base column's values in a batch."""
    if name == "archived":
        return lambda cols: ["True" if v else "False" for v in cols[8]]
    if name == "name":
        return lambda cols: [key.rpartition("/")[2] for key in cols[0]]
    if name == "log_dir":
        return lambda cols: [
            roots[True] + key[4:] if flag else roots[False] + key for key, flag in zip(cols[0], cols[8])
        ]
    position = at[name]
    return lambda cols: list(cols[position])


def _overridden(kind: str, texts: Sequence[Optional[str]], own: List[Any]) -> List[str]:
    """A base column some runs have a hyper-parameter for: the hyper-parameter wins."""
    return [cell(kind, v if t is None else json_value(t)) for t, v in zip(texts, own)]


def _cell_columns(plan: Plan) -> Tuple[str, Tuple[Any, ...]]:
    """The stored columns of a row, then hyper-parameters and metric summaries as JSON (the
    positions :func:`_columns` reads), with the JSON paths' arguments."""
    cells = ["pjson -> ?"] * (len(plan.overrides) + len(plan.params)) + ["mjson -> ?"] * len(plan.metrics)
    paths = [json_path(name) for name in plan.overrides + plan.params]
    paths += [f"{json_path(metric)}[{i}]" for metric, i in plan.metrics]
    sql = (
        "key, idx, task, status, start_time, end_time, host, ip, archived, parent, time_step, "
        f"n_rows, param_source{''.join(', ' + c for c in cells)}"
    )
    return sql, tuple(paths)


def _select(plan: Plan, what: Optional[Tuple[str, Tuple[Any, ...]]] = None) -> Tuple[str, Tuple[Any, ...]]:
    """The row query of the listing (``what``: the selected expression, default the cells)."""
    columns, args = what or _cell_columns(plan)
    sql = f"SELECT {columns} FROM runs WHERE {plan.where} ORDER BY {ORDER} LIMIT ?"
    return sql, args + plan.args + (-1 if plan.limit is None else plan.limit,)


def write(plan: Plan, catalog: Any, out: IO[str]) -> int:
    """Write the listing as CSV to ``out`` (pandas' dialect); returns the rows written.

    The lines SQLite renders (:mod:`RLA.query.csv_sql`) are written as they come; the others
    (rows built by the reference code, values SQL cannot print exactly, cells that need CSV
    quoting) are built from the rows' cells here, a batch at a time.
    """
    from RLA.layout import LOG, type_root
    from RLA.query.csv_sql import line_sql

    csv.writer(out, lineterminator="\n").writerow(plan.columns)
    columns = _columns(plan, catalog.data_root)
    roots = {flag: os.fspath(type_root(catalog.data_root, LOG, flag)) + "/" for flag in (False, True)}
    line = line_sql(plan, roots)
    if line is None:
        return _write_cells(plan, catalog, columns, out)
    width = len(plan.columns)
    cursor = catalog.conn.execute(*_select(plan, ("key, " + line[0], line[1])))
    written = 0
    while True:
        rows = cursor.fetchmany(BATCH)
        if not rows:
            return written
        lines = [row[1] for row in rows]
        if None in lines or not _plain("\n".join(lines), len(lines), width):
            bad = [i for i, text in enumerate(lines) if text is None or not _plain(text, 1, width)]
            built = _built_lines(plan, catalog, columns, [rows[i][0] for i in bad])
            for i in bad:
                lines[i] = built[rows[i][0]]
        out.write("\n".join(lines) + "\n")
        written += len(rows)


def _plain(text: str, lines: int, width: int) -> bool:
    """Whether ``lines`` joined lines of ``width`` cells need no CSV quoting (no comma inside a
    cell, no quote, no line break in a cell)."""
    return (
        text.count(",") == lines * (width - 1)
        and '"' not in text
        and "\r" not in text
        and text.count("\n") == lines - 1
    )


def _built_lines(plan: Plan, catalog: Any, columns: List[Column], keys: List[str]) -> Dict[str, str]:
    """``{key: CSV line}`` of these rows, built from their cells (quoted by the csv module)."""
    what, args = _cell_columns(plan)
    sql = f"SELECT {what} FROM runs WHERE key IN (SELECT value FROM json_each(?))"
    rows = catalog.conn.execute(sql, args + (json.dumps(keys),)).fetchall()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    out: Dict[str, str] = {}
    for row, cells in zip(rows, _cells(plan, columns, rows)):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(cells)
        out[row[0]] = buffer.getvalue()[:-1]
    return out


def _write_cells(plan: Plan, catalog: Any, columns: List[Column], out: IO[str]) -> int:
    """Write every line from its cells (when SQL renders none)."""
    writer = csv.writer(out, lineterminator="\n")
    cursor = catalog.conn.execute(*_select(plan))
    written = 0
    while True:
        rows = cursor.fetchmany(BATCH)
        if not rows:
            return written
        _write_lines(out, writer, _cells(plan, columns, rows), len(plan.columns))
        written += len(rows)


def _cells(plan: Plan, columns: List[Column], rows: List[tuple]) -> List[tuple]:
    """The cells of a batch of rows (:func:`_cell_columns`), a column at a time."""
    times = {name: (10, 19, 23, 26)[plan.time_widths[name]] for name in TIMES if name in plan.columns}
    # The stored cells of special rows may hold anything (NaN as text, a name that is no
    # number in a column of numbers): only the other rows go through the columns.
    normal = [row for row in rows if row[0] not in plan.special]
    cols = list(zip(*normal))
    built = iter(list(zip(*(column(cols) for column in columns))) if normal else [])
    lines: List[tuple] = [() if row[0] in plan.special else next(built) for row in rows]
    for i in (i for i, row in enumerate(rows) if row[0] in plan.special):
        item = plan.special[rows[i][0]]  # built by the reference code; times as stored (the same)
        lines[i] = tuple(
            _cut(rows[i][TIMES.index(name) + 4], times[name])
            if name in times
            else cell(plan.kinds[name], item.get(name, MISSING))
            for name in plan.columns
        )
    return lines


def _write_lines(out: IO[str], writer: Any, lines: List[tuple], width: int) -> None:
    """Write ``lines`` as the csv module would: a line none of whose cells needs quoting
    (no comma inside a cell, no quote, no line break; not a lone empty cell) is joined
    directly, the others go through the csv writer."""
    text = [",".join(line) for line in lines]
    if width > 1 and all(
        t.count(",") == width - 1 and '"' not in t and "\n" not in t and "\r" not in t for t in text
    ):
        out.write("\n".join(text) + "\n")
        return
    for line, joined in zip(lines, text):
        if width > 1 and joined.count(",") == width - 1 and not any(c in joined for c in '"\n\r'):
            out.write(joined + "\n")
        else:
            writer.writerow(line)


def _cut(text: Optional[str], width: int) -> str:
    return "" if text is None else text[:width]


def _whole_days(catalog: Any, task: Optional[str], archived: bool) -> Tuple[Set[str], List[str]]:
    """``(whole days, other days)`` of the scope from the stored day listings: a day is whole
    when its ``log/`` and ``code/`` folders are listed and every data type's folder of that day
    lists the same runs (then each of its runs has both: none is a fragment)."""
    from RLA.layout import CODE, LOG
    from RLA.query.tree import store_path

    prefix = ("arc:" if archived else "") + (f"{task}/" if task else "")
    code, log = (store_path(kind, archived, "") + "/" for kind in (CODE, LOG))
    sql = (
        "SELECT day, count(DISTINCT names) = 1 AND max(substr(path, 1, ?) = ?) AND max(substr(path, 1, ?) = ?) "
        "FROM dirs WHERE day IS NOT NULL AND substr(day, 1, ?) = ? AND (substr(day, 1, 4) = 'arc:') = ? "
        "GROUP BY day"
    )
    whole: Set[str] = set()
    other: List[str] = []
    for day, ok in catalog.conn.execute(
        sql, (len(code), code, len(log), log, len(prefix), prefix, int(archived))
    ):
        (whole.add(day) if ok else other.append(day))
    return whole, other


def fragment_candidates(
    catalog: Any, task: Optional[str], archived: Optional[bool]
) -> Iterator[Tuple[bool, str, bool, str]]:
    """``(archived, relative path, has run.json, index)`` of the stored runs of the scope that may
    be fragments, in key order: the runs of the days whose folder listings differ (see
    :func:`_whole_days`) whose ``code/`` folder is not in the stored listing of its day, and
    those without ``run.json`` (whose ``log/`` folder counts too). The listings are the ones the
    refresh just checked; ``rla list``'s fragment check ``stat``\\ s only these runs, instead of
    every run, and reads no run of a day whose listings agree."""
    from RLA.layout import CODE
    from RLA.query.tree import store_path

    found: List[Tuple[str, Tuple[bool, str, bool, str]]] = []
    for flag in [False, True] if archived is None else [archived]:
        whole, other = _whole_days(catalog, task, flag)
        listed: Set[str] = set()
        prefix = store_path(CODE, flag, task or "")
        sql = "SELECT path, names FROM dirs WHERE day IN (SELECT value FROM json_each(?)) AND substr(path, 1, ?) = ?"
        for path, names in catalog.conn.execute(sql, (json.dumps(other), len(prefix), prefix)):
            listed.update(f"{path}/{name}" for name in json.loads(names))
        rows = catalog.conn.execute(
            "SELECT key, idx, status != 'unknown' FROM runs WHERE day IN (SELECT value FROM json_each(?))",
            (json.dumps(other),),
        )
        for key, index, has_info in rows:
            relative = key[4:] if flag else key
            if not has_info or store_path(CODE, flag, relative) not in listed:
                found.append((key, (flag, relative, bool(has_info), index)))
    for _, item in sorted(found):
        yield item
