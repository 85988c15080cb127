"""Select runs: task, the original's glob "regex", time range, status and a typed query.

:func:`select_runs` reads the catalog (refreshing it from the tree), applies the filters
and returns :class:`RunRow` objects; broken runs (corrupt ``run.json``/``progress.csv``)
are reported in :attr:`Selection.skipped` and left out, the rest are still returned.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from RLA.errors import QueryError, RunNotFoundError
from RLA.layout import RunLayout
from RLA.naming import DATE_RE
from RLA.query.catalog import Catalog, ProgressFn
from RLA.query.expr import Query, RowView, parse_query
from RLA.query.names import RUN_COLUMNS, check_names, check_query_names  # noqa: F401 (re-exported)
from RLA.query.records import RunRecord, start_time_of

UNKNOWN_STATUS = "unknown"


class RunRow:
    """One selected run: where it lives, what the catalog knows, its effective status.

    ``status`` and ``start_time`` are computed on first use (most queries never need them
    for most runs).
    """

    __slots__ = ("layout", "record", "_status", "_start")

    def __init__(self, layout: RunLayout, record: RunRecord) -> None:
        self.layout = layout
        self.record = record
        self._status: Optional[str] = None
        self._start: Any = False

    @property
    def status(self) -> str:
        """``running``/``finished``/``crashed``/``killed``, or ``unknown`` without run.json."""
        if self._status is None:
            from RLA.manager.run_info import effective_status

            self._status = effective_status(self.record.info) if self.record.info else UNKNOWN_STATUS
        return self._status

    @property
    def start_time(self) -> Optional[_dt.datetime]:
        """Local start time (from run.json, else from the index)."""
        if self._start is False:
            self._start = start_time_of(self.layout, self.record.info)
        return self._start

    @property
    def index(self) -> str:
        return self.layout.index

    @property
    def params(self) -> Dict[str, Any]:
        return self.record.params

    def columns(self) -> Dict[str, Any]:
        """The run columns (see :data:`RUN_COLUMNS`)."""
        info = self.record.info
        return {
            "index": self.layout.index,
            "task": self.layout.task,
            "date": self.layout.date,
            "name": self.layout.name,
            "record_date": self.layout.record_date,
            "status": self.status,
            "host": info.get("host"),
            "ip": info.get("ip") or _name_ip(self.layout.name),
            "start_time": self.start_time.isoformat(sep=" ") if self.start_time else None,
            "end_time": info.get("end_time"),
            "archived": self.layout.archived,
            "parent": info.get("parent"),
            "time_step": self.record.time_step,
            "n_rows": self.record.n_rows,
            "param_source": self.record.param_source,
        }

    def view(self) -> RowView:
        """What a query expression sees (hyper-parameters shadow run columns)."""
        return RowView(self.record.params, self.record.metrics, self.columns)


def _name_ip(name: str) -> Optional[str]:
    from RLA.naming import parse_run_name

    parsed = parse_run_name(name)
    return parsed.ip if parsed and parsed.ip else None


@dataclass
class Selection:
    """The result of :func:`select_runs`."""

    runs: List[RunRow] = field(default_factory=list)
    #: ``(index, problem)`` for every run left out because it could not be read.
    skipped: List[Tuple[str, str]] = field(default_factory=list)
    #: Runs in the task scope before filtering (to tell "empty task" from "no match").
    scanned: int = 0

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self):
        return iter(self.runs)


def parse_when(text: Union[str, _dt.date, _dt.datetime, None], end: bool = False) -> Optional[_dt.datetime]:
    """Parse ``2026/11/01``, ``2026-11-01``, ``2026/11/01/13-05-00-000000`` or ISO datetimes.

    Args:
        end: a bare date means the end of that day (for ``--until``).

    Raises:
        QueryError: the text is not a date.
    """
    if text is None or text == "":
        return None
    if isinstance(text, _dt.datetime):
        return text.replace(tzinfo=None) if text.tzinfo is None else text.astimezone().replace(tzinfo=None)
    if isinstance(text, _dt.date):
        text = text.isoformat()
    raw = str(text).strip()
    norm = raw.replace("/", "-")
    for fmt in ("%Y-%m-%d-%H-%M-%S-%f", "%Y-%m-%d-%H-%M-%S", "%Y-%m-%d-%H-%M", "%Y-%m-%d"):
        try:
            when = _dt.datetime.strptime(norm, fmt)
        except ValueError:
            continue
        if end and fmt == "%Y-%m-%d":
            when = when + _dt.timedelta(days=1) - _dt.timedelta(microseconds=1)
        return when
    for fmt in ("%Y-%m", "%Y"):
        try:
            when = _dt.datetime.strptime(norm, fmt)
        except ValueError:
            continue
        if end:
            nxt = (
                when.replace(year=when.year + 1)
                if fmt == "%Y"
                else (
                    when.replace(month=when.month + 1)
                    if when.month < 12
                    else when.replace(year=when.year + 1, month=1)
                )
            )
            return nxt - _dt.timedelta(microseconds=1)
        return when
    try:
        when = _dt.datetime.fromisoformat(raw)
    except ValueError:
        raise QueryError(
            f"Cannot read the date {raw!r}",
            expected="YYYY/MM/DD, YYYY-MM-DD, YYYY/MM/DD/HH-MM-SS-ffffff or an ISO datetime",
            found=repr(raw),
            fix="write e.g. --since 2026/11/01",
        ) from None
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def match_selector(run: RunLayout, selector: str) -> bool:
    """The original's "regex": a glob, or a prefix, of ``<YYYY>/<MM>/<DD>/<name>``.

    A full index (``task/YYYY/MM/DD/...``) also works; it must name the run's task.
    """
    selector = selector.strip().rstrip("/")
    match = re.match(rf"^(?P<task>.+?)/(?P<rest>{DATE_RE}(?:/.*)?)$", selector)
    if match:
        if match["task"] != run.task:
            return False
        selector = match["rest"]
    rel = f"{run.date}/{run.name}"
    if any(ch in selector for ch in "*?["):
        return fnmatch.fnmatchcase(rel, selector) or fnmatch.fnmatchcase(rel, selector + "*")
    return rel.startswith(selector)


def check_task(catalog: Catalog, task: str, scanned: int) -> None:
    """Raise :class:`RunNotFoundError` for a task that has no run at all."""
    if scanned:
        return
    from RLA.query.tree import discover

    tasks = sorted({run.task for run in discover(catalog.data_root, None, None).values()})
    close = difflib.get_close_matches(task, tasks, n=1)
    raise RunNotFoundError(
        f"Unknown task {task!r} in {catalog.data_root}",
        expected=f"one of {', '.join(tasks) if tasks else '(the data root has no runs)'}",
        found=repr(task),
        fix=f"did you mean {close[0]!r}" if close else "check --task and --data-root",
    )


@dataclass(frozen=True)
class _Filters:
    """The parsed filters of one selection: SQL narrows the candidates, :meth:`admits` decides."""

    query: Optional[Query]
    selectors: List[str]
    since: Optional[_dt.datetime]
    until: Optional[_dt.datetime]
    statuses: List[str]

    def admits(self, row: RunRow) -> bool:
        """Whether ``row`` passes every filter (checked in order of cost)."""
        if self.selectors and not any(match_selector(row.layout, s) for s in self.selectors):
            return False
        if self.since and (row.start_time is None or row.start_time < self.since):
            return False
        if self.until and (row.start_time is None or row.start_time > self.until):
            return False
        if self.statuses and row.status not in self.statuses:
            return False
        return self.query is None or self.query.matches(row.view())


def _parse_filters(
    where: Union[str, Query, None],
    regex: Union[str, Sequence[str], None],
    since: Any,
    until: Any,
    status: Union[str, Sequence[str], None],
) -> _Filters:
    """The filter arguments of :func:`select_runs`, parsed and checked (see there).

    Raises:
        QueryError: a bad expression, date or status.
    """
    from RLA.manager.run_info import STATUSES

    query = parse_query(where) if isinstance(where, str) else where
    since_t, until_t = parse_when(since), parse_when(until, end=True)
    statuses = [status] if isinstance(status, str) else list(status or [])
    allowed = set(STATUSES) | {UNKNOWN_STATUS}
    for item in statuses:
        if item not in allowed:
            raise QueryError(
                f"Unknown status {item!r}",
                expected=f"one of {', '.join(sorted(allowed))}",
                found=repr(item),
                fix="pick a listed status",
            )
    selectors = [regex] if isinstance(regex, str) else list(regex or [])
    return _Filters(query, selectors, since_t, until_t, statuses)


def _sql_filters(filters: _Filters) -> Tuple[str, Tuple[Any, ...]]:
    """The SQL condition selecting the candidates (a superset: Python decides exactly)."""
    from RLA.query.sqlwhere import compile_query
    from RLA.query.stored import TIME_FORMAT

    parts: List[str] = []
    args: Tuple[Any, ...] = ()
    if filters.query is not None:
        (may, may_args), _ = compile_query(filters.query)
        parts.append(may)
        args += may_args
    if filters.statuses:  # a stored 'running' may be crashed now: Python decides those
        parts.append(f"(status IN ({', '.join('?' * len(filters.statuses))}) OR status = 'running')")
        args += tuple(filters.statuses)
    slack = _dt.timedelta(days=2)  # stored times are local to the writer's time zone
    if filters.since is not None:
        parts.append("start_time >= ?")
        args += ((filters.since - slack).strftime(TIME_FORMAT),)
    if filters.until is not None:
        parts.append("start_time <= ?")
        args += ((filters.until + slack).strftime(TIME_FORMAT),)
    return " AND ".join(parts) or "1", args


def _merged(
    stored: Iterable[Tuple[RunLayout, RunRecord]], damaged: List[Tuple[RunLayout, RunRecord]]
) -> Iterable[Tuple[RunLayout, RunRecord]]:
    """The stored runs and the damaged ones (include_broken), in key order."""
    from RLA.query.tree import run_key

    if not damaged:
        yield from stored
        return
    queue = sorted(damaged, key=lambda pair: run_key(pair[0]))
    for layout, record in stored:
        while queue and run_key(queue[0][0]) < run_key(layout):
            yield queue.pop(0)
        yield layout, record
    yield from queue


def select_runs(
    data_root: Union[str, os.PathLike, Catalog],
    task: Optional[str] = None,
    regex: Union[str, Sequence[str], None] = None,
    where: Union[str, Query, None] = None,
    since: Any = None,
    until: Any = None,
    status: Union[str, Sequence[str], None] = None,
    archived: Optional[bool] = False,
    include_broken: bool = False,
    progress: Optional[ProgressFn] = None,
    verify: bool = False,
    limit: Optional[int] = None,
    offset: int = 0,
) -> Selection:
    """Select runs of a data root (in index order).

    The catalog is refreshed for the scope, the filters are compiled to SQL over the index
    (:mod:`RLA.query.sqlwhere`), and only the candidate rows are decoded and checked exactly.

    Args:
        data_root: the database root (or an open :class:`Catalog`).
        task: only this task (and its sub-tasks).
        regex: one glob (or several, OR-ed) on ``<YYYY>/<MM>/<DD>/<name>``, as the original.
        where: a query expression (see :mod:`RLA.query.expr`).
        since, until: start-time bounds (``2026/11/01``; ``until`` includes that day).
        status: ``running``, ``finished``, ``crashed``, ``killed`` or ``unknown`` (or a list).
        archived: ``False`` active runs, ``True`` archived runs, ``None`` both.
        include_broken: keep runs that could not be read (they still appear in ``skipped``).
        progress: ``progress(items, total)`` returns a bar (tqdm) for runs read from disk.
        verify: list every folder and ``stat`` every run's files now (see :mod:`RLA.query.warm`).
        limit, offset: the page of the selected runs to return (no more rows are decoded).

    Raises:
        RunNotFoundError: ``task`` has no run at all.
        QueryError: a bad expression, date, status or an unknown name/metric.
    """
    filters = _parse_filters(where, regex, since, until, status)
    own = not isinstance(data_root, Catalog)
    catalog = data_root if isinstance(data_root, Catalog) else Catalog(Path(data_root))
    try:
        return _select(catalog, task, archived, filters, include_broken, progress, verify, limit, offset)
    finally:
        if own:
            catalog.close()


def _select(
    catalog: Catalog,
    task: Optional[str],
    archived: Optional[bool],
    filters: _Filters,
    include_broken: bool,
    progress: Optional[ProgressFn],
    verify: bool,
    limit: Optional[int],
    offset: int,
) -> Selection:
    """:func:`select_runs` on an open catalog, its filters parsed."""
    from RLA.query.tree import layout_of

    damaged = catalog.refresh(task, archived, progress, verify)
    scope, scope_args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    scanned = int(
        catalog.conn.execute(f"SELECT count(*) FROM runs WHERE {scope}", scope_args).fetchone()[0]
    ) + len(damaged)
    if task is not None:
        check_task(catalog, task, scanned)
    if filters.query is not None:
        check_query_names(catalog, filters.query, task, archived, damaged.values())
    broken = [(layout_of(catalog.data_root, key), damaged[key]) for key in sorted(damaged)]
    result = Selection(
        scanned=scanned, skipped=[(layout.index, "; ".join(rec.problems)) for layout, rec in broken]
    )
    result.skipped += [
        (
            path,
            "folder name is not valid UTF-8 (copied from a machine with another locale?); "
            "rename it to list it",
        )
        for path in catalog.undecodable
    ]
    where, args = _sql_filters(filters)
    exact_page = where == "1" and not filters.selectors and not (include_broken and broken)
    stored = catalog.fetch(
        task, archived, where, args, limit if exact_page else None, offset if exact_page else 0
    )
    skip = 0 if exact_page else offset
    for layout, record in _merged(stored, broken if include_broken else []):
        if limit is not None and len(result.runs) >= limit:
            break
        row = RunRow(layout, record)
        if not filters.admits(row):
            continue
        if skip:
            skip -= 1
            continue
        result.runs.append(row)
    return result
