"""The value types of a listing's columns, surveyed from a per-run summary stored in the index.

How pandas writes a column depends on the types of its values over every listed run
(:mod:`RLA.query.csv_stream`). Each stored run carries a ``shape``, the type of each of its
values (the tag :mod:`RLA.query.csv_stream` gives a value: ``int``, ``float``, ``str``, ``bool``,
``na``, ``tuple``...), and ``tres``, the resolution of its two times; the survey of a listing is one
``GROUP BY`` over those two short columns (a few distinct shapes, whatever the number of runs),
instead of a walk through every run's JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

#: The stored columns whose SQL type decides their kind (the others are constant).
TYPED = ("host", "ip", "parent", "time_step", "n_rows")
_CONSTANT = {"index": "str", "task": "str", "status": "str", "name": "str", "log_dir": "str"}
_CONSTANT.update({"archived": "bool", "param_source": "str"})


def value_tag(value: Any) -> str:
    """The tag of a JSON-able value, as SQLite's ``json_each`` types it."""
    if value is None:
        return "na"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float", str: "str", list: "tuple", dict: "dict"}.get(type(value), "other")


def shape_of(params: Dict[str, Any], metrics: Dict[str, Any], base: Sequence[Any]) -> str:
    """The ``shape`` column of a run: its hyper-parameters' and metric summaries' tags, and those
    of the :data:`TYPED` columns (``base``, in that order)."""
    return json.dumps(
        [
            sorted((key, value_tag(value)) for key, value in params.items()),
            sorted(
                (key, [value_tag(v) for v in triple] if isinstance(triple, list) else [value_tag(triple)])
                for key, triple in metrics.items()
            ),
            [value_tag(value) for value in base],
        ],
        ensure_ascii=False,
    )


def _resolution(text: Optional[str]) -> int:
    """0 date only .. 3 microseconds (``TIME_FORMAT`` text; None counts as 0)."""
    if text is None:
        return 0
    return (
        0
        if text[11:] == "00:00:00.000000"
        else 1
        if text[20:] == "000000"
        else 2
        if text[23:] == "000"
        else 3
    )


def tres_of(start: Optional[str], end: Optional[str]) -> int:
    """The ``tres`` column: ``4 * resolution(start) + resolution(end)``; -1 when a time is not
    written with 26 characters (a year before 1000: the frame path lists those)."""
    if any(text is not None and len(text) != 26 for text in (start, end)):
        return -1
    return 4 * _resolution(start) + _resolution(end)


@dataclass
class Survey:
    """The grouped summary of a listing's rows."""

    total: int = 0
    #: Rows written in another time zone, or with a time the stream cannot cut.
    foreign: int = 0
    #: Rows the reference code builds (not ``exact``/``plain``, or ``running``).
    special: int = 0
    #: Normal rows.
    count: int = 0
    #: ``{"p:<param>" | "m:<metric>:<position>": tags}`` over the normal rows.
    tags: Dict[str, Set[str]] = field(default_factory=dict)
    #: ``{param: normal rows having it}``.
    having: Dict[str, int] = field(default_factory=dict)
    #: ``{base column: tags}`` over the normal rows.
    base: Dict[str, Set[str]] = field(default_factory=dict)
    #: ``(start, end)`` finest time resolution over every row.
    widths: Tuple[int, int] = (0, 0)
    #: ``(parsed shape, rows)`` of the normal rows.
    shapes: List[Tuple[Any, int]] = field(default_factory=list)


def survey(catalog: Any, scope: str, args: Tuple[Any, ...]) -> Survey:
    """Group the rows of ``scope`` by shape, time resolution and time zone (one query)."""
    from RLA.query.csv_stream import tz_signature

    out = Survey()
    # grouped by the columns of runs_survey in its order: read in order, never sorted
    sql = (
        "SELECT shape, tres, tz = ?, exact AND plain AND status != 'running', count(*) "
        f"FROM runs WHERE {scope} GROUP BY archived, shape, tres, tz, exact, plain, status"
    )
    parsed: Dict[str, Any] = {}
    start = end = 0
    for shape, tres, local, normal, n in catalog.conn.execute(sql, (tz_signature(),) + args):
        out.total += n
        if not local or tres < 0:
            out.foreign += n
            continue
        start, end = max(start, tres // 4), max(end, tres % 4)
        if not normal:
            out.special += n
            continue
        out.count += n
        if shape not in parsed:
            parsed[shape] = json.loads(shape)
        out.shapes.append((parsed[shape], n))
    out.widths = (start, end)
    _add_tags(out)
    return out


def _add_tags(out: Survey) -> None:
    """Fill the tags of :class:`Survey` from its normal shapes."""
    from RLA.query.expr import METRIC_FUNCS

    rows_with: Dict[str, int] = {}
    out.base = {name: set() for name in list(_CONSTANT) + list(TYPED)} if out.shapes else {}
    for (params, metrics, base), n in out.shapes:
        for key, tag in params:
            out.tags.setdefault(f"p:{key}", set()).add(tag)
            out.having[key] = out.having.get(key, 0) + n
        for key, tags in metrics:
            for position, tag in enumerate(tags):
                out.tags.setdefault(f"m:{key}:{position}", set()).add(tag)
            rows_with[key] = rows_with.get(key, 0) + n
        for name, tag in zip(TYPED, base):
            out.base[name].add(tag)
        for name, tag in _CONSTANT.items():
            out.base[name].add(tag)
    for metric, n in rows_with.items():
        if n < out.count:
            for position in range(len(METRIC_FUNCS)):
                out.tags[f"m:{metric}:{position}"].add("missing")
    for key, n in out.having.items():
        if n < out.count:
            out.tags[f"p:{key}"].add("missing")


def base_tags_without(found: Survey, param: str) -> Dict[str, Set[str]]:
    """The base columns' tags over the normal rows that lack hyper-parameter ``param``."""
    tags: Dict[str, Set[str]] = {name: set() for name in list(_CONSTANT) + list(TYPED)}
    for (params, _, base), _n in found.shapes:
        if any(key == param for key, _ in params):
            continue
        for name, tag in zip(TYPED, base):
            tags[name].add(tag)
        for name, tag in _CONSTANT.items():
            tags[name].add(tag)
    return tags
