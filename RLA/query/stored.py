"""How a run's record becomes a row of the index's ``runs`` table, and back.

Besides the whole record (JSON), a row holds what the ``where`` compiler
(:mod:`RLA.query.sqlwhere`) reads in SQL: the ``run.json`` status, the start time, and the
hyper-parameters (``pjson``) and metric summaries (``mjson``) as JSON for SQLite's JSON
functions. ``exact`` says whether ``pjson`` holds the values exactly as Python sees them
(no NaN/infinity, no integer beyond 2**53, no key SQLite's JSON paths cannot address); a
row that is not exact is always handed to the Python evaluator.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple

from RLA.layout import RunLayout
from RLA.query.records import RunRecord, start_time_of
from RLA.query.tree import run_key

#: Text format of the ``start_time`` column (sorts as time; naive local time).
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_INT_LIMIT = 2**53


def addressable(name: str) -> bool:
    """Whether SQLite's JSON path ``$."name"`` finds this key (stored with ensure_ascii=False)."""
    return '"' not in name and "\\" not in name and all(ord(ch) >= 0x20 for ch in name)


def _exact_value(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):  # SQLite's text functions stop at a NUL character
        return "\x00" not in value
    if isinstance(value, int):
        return -_INT_LIMIT <= value <= _INT_LIMIT
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_exact_value(item) for item in value)
    return False  # dicts (an empty one) and anything else: Python decides


def _safe(value: Any) -> Any:
    """A JSON-able stand-in for a value SQLite's JSON cannot hold (NaN, infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, list):
        return [_safe(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _safe(v) for k, v in value.items()}
    return value


def stored_status(record: RunRecord) -> str:
    """The status ``run.json`` states (``running`` when absent, ``unknown`` without run.json)."""
    if not record.info:
        return "unknown"
    status = record.info.get("status", "running")
    return status if isinstance(status, str) else "running"


def unread_row(layout: RunLayout) -> Tuple[str, str, str, int]:
    """The ``unread`` row of a run (damaged, or not read yet)."""
    key = run_key(layout)
    return key, key.rsplit("/", 1)[0], layout.task, int(layout.archived)


def local_time(text: Any) -> Optional[_dt.datetime]:
    """A ``run.json`` time as naive local time (None when absent or not a time)."""
    from RLA.manager.run_info import parse_time

    when = parse_time(text) if isinstance(text, str) else None
    if when is None:
        return None
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def listing_cells(layout: RunLayout, record: RunRecord, start: Optional[str] = None) -> Tuple:
    """``(idx, end_time, host, ip, parent, time_step, n_rows, param_source, plain, tz, shape,
    tres)`` of a row.

    ``plain`` is 1 when these cells, the status and start time columns and the JSON columns
    hold exactly what :func:`RLA.query.frame.rows_to_frame` would show for the run (texts are
    texts, numbers numbers), so :mod:`RLA.query.csv_stream` may write its listing from them.
    ``start`` is the ``start_time`` column's text (for ``tres``).
    """
    from RLA.query.csv_stream import tz_signature
    from RLA.query.selection import _name_ip

    info = record.info
    end = local_time(info.get("end_time"))
    cells = [info.get("host"), info.get("ip") or _name_ip(layout.name), info.get("parent")]
    texts = all(value is None or isinstance(value, str) for value in cells)
    metrics = all(
        isinstance(triple, list) and len(triple) == 3 and all(v is None or _number(v) for v in triple)
        for triple in record.metrics.values()
    )
    plain = texts and metrics and _number(record.time_step) and type(record.n_rows) is int
    from RLA.query.csv_survey import shape_of, tres_of

    typed = [
        *(cells if texts else (None, None, None)),
        record.time_step if _number(record.time_step) else None,
        record.n_rows if type(record.n_rows) is int else None,
    ]
    end_text = end.strftime(TIME_FORMAT) if end else None
    return (
        layout.index,
        end_text,
        *typed,
        record.param_source if isinstance(record.param_source, str) else None,
        int(plain and isinstance(record.param_source, str)),
        tz_signature(),  # the times above are local: another time zone does not trust them
        shape_of(record.params, record.metrics, typed),
        tres_of(start, end_text),
    )


def encode(layout: RunLayout, record: RunRecord, sig: str, settled: bool, checked_at: float) -> Tuple:
    """The ``runs`` row of a readable run (a record without problems)."""
    key = run_key(layout)
    day = key.rsplit("/", 1)[0]
    start = start_time_of(layout, record.info)
    start_text = start.strftime(TIME_FORMAT) if start else None
    exact = all(addressable(k) and _exact_value(v) for k, v in record.params.items())
    pjson = json.dumps(_safe(record.params), ensure_ascii=False)
    mjson = json.dumps({k: v for k, v in record.metrics.items() if addressable(k)}, ensure_ascii=False)
    exact = exact and len(record.metrics) == len(json.loads(mjson))
    return (
        key,
        day,
        layout.task,
        int(layout.archived),
        sig,
        int(settled),
        checked_at,
        stored_status(record),
        start_text,
        int(exact),
        pjson,
        mjson,
        json.dumps(record.__dict__),
        *listing_cells(layout, record, start_text),
    )


def put_runs(conn: Any, rows: Iterable[Sequence[Any]], recheck_s: Optional[float] = None) -> None:
    """Store rows made by :func:`encode`: the run's columns in ``runs``; whether it is settled,
    when it was checked (:func:`RLA.query.warm.stamp` of ``recheck_s``, default
    :data:`RLA.query.warm.RECHECK_S`) and what a check reads in ``checks``.

    Args:
        conn: an open ``sqlite3`` connection to the index, in a write transaction.
    """
    from RLA.query.index_file import CHECK_AT, INSERT_CHECK, INSERT_RUN, LOWER_DUE, RUN_COLUMNS
    from RLA.query.warm import RECHECK_S, jitter, stamp

    period = RECHECK_S if recheck_s is None else recheck_s
    rows = list(rows)
    conn.executemany(INSERT_RUN, [tuple(row[:CHECK_AT]) + tuple(row[CHECK_AT + 2 :]) for row in rows])
    at = [RUN_COLUMNS.index(name) for name in ("sig", "status", "archived", "task")]
    checks = [
        (row[0], row[CHECK_AT], stamp(row[0], row[CHECK_AT + 1], period), jitter(row[0]))
        + tuple(row[i] for i in at)
        for row in rows
    ]
    conn.executemany(INSERT_CHECK, checks)
    settled = [check[2] for check in checks if check[1]]
    if settled:  # keep meta['due_from'] at or before every settled run's check time
        conn.execute(LOWER_DUE, (math.floor(min(settled)) - 1,))


def decode(text: str) -> Optional[RunRecord]:
    """The record of a row (None if the stored text is not a record: then it is read again)."""
    try:
        data: Dict[str, Any] = json.loads(text)
        return RunRecord(**data)
    except (ValueError, TypeError, RecursionError):
        return None
