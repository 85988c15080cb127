"""The runs table of the dashboard: select with RLA's query API, sort, page, pick columns.

Every filter is RLA's own (:func:`RLA.query.select_runs`): ``where`` is the query language,
``task``/``status``/``since``/``until``/``archived`` the same options as ``rla list``.
``tag`` keeps runs carrying that tag (see :mod:`RLA.annotations`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from RLA.annotations import read_annotations
from RLA.errors import QueryError
from RLA.ui.encode import jsonable

#: Columns shown when the page names none.
DEFAULT_COLUMNS = ("index", "status", "start_time", "time_step")
MAX_LIMIT = 1000


@dataclass
class RunFilter:
    """The filters of a runs request (all optional)."""

    where: Optional[str] = None
    task: Optional[str] = None
    status: List[str] = field(default_factory=list)
    since: Optional[str] = None
    until: Optional[str] = None
    archived: Optional[bool] = False
    tag: Optional[str] = None
    runs: List[str] = field(default_factory=list)

    @classmethod
    def from_query(cls, params: Mapping[str, Any], getlist: Any) -> "RunFilter":
        """Read the filters from URL parameters (``getlist(name)`` returns every value)."""
        archived = params.get("archived", "0")
        return cls(
            where=(params.get("where") or "").strip() or None,
            task=params.get("task") or None,
            status=[s for s in getlist("status") if s],
            since=params.get("since") or None,
            until=params.get("until") or None,
            archived={"1": True, "all": None}.get(archived, False),
            tag=params.get("tag") or None,
            runs=[r for r in getlist("run") if r],
        )


def select(data_root: os.PathLike, flt: RunFilter) -> Any:
    """The :class:`RLA.query.Selection` of ``flt`` (tag and explicit runs applied).

    Raises:
        QueryError: a bad expression, date or status (``position`` set for expressions).
    """
    from RLA.query import select_runs, warn_skipped

    selection = select_runs(
        data_root,
        task=flt.task,
        where=flt.where,
        since=flt.since,
        until=flt.until,
        status=flt.status or None,
        archived=flt.archived,
    )
    warn_skipped(selection)
    if flt.runs:
        wanted = set(flt.runs)
        selection.runs = [row for row in selection.runs if row.index in wanted]
    if flt.tag:
        selection.runs = [
            row for row in selection.runs if flt.tag in read_annotations(row.layout.log_dir).tags
        ]
    return selection


def _sorted(frame: Any, column: Optional[str], descending: bool) -> Any:
    """``frame`` sorted by ``column`` (mixed types compare as text; missing values last)."""
    if not column or column not in frame.columns:
        return frame.sort_values("start_time", ascending=False, na_position="last", kind="stable")
    try:
        return frame.sort_values(column, ascending=not descending, na_position="last", kind="stable")
    except TypeError:
        key = frame[column].map(lambda v: "" if v is None else str(v))
        order = key.sort_values(ascending=not descending, kind="stable").index
        return frame.loc[order]


def _limit(value: Any, default: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise QueryError(
            "Bad paging value", expected="an integer", found=repr(value), fix="pass e.g. limit=50&offset=0"
        ) from None
    if number < 0:
        raise QueryError(
            "Bad paging value", expected="an integer >= 0", found=str(number), fix="pass limit=50"
        )
    return min(number, high) if high else number


#: Seconds a cached table holding running runs is reused (their status changes without
#: any file changing; a table of ended runs is reused until the index changes).
LIVE_TABLE_S = 5.0


def _table(data_root: os.PathLike, flt: RunFilter, sort: Optional[str], descending: bool) -> Tuple[Any, int]:
    """The sorted frame of ``flt`` and the number of skipped runs, cached per index generation."""
    from RLA.query import WARM, Catalog, rows_to_frame

    def build() -> Tuple[Any, int]:
        selection = select(data_root, flt)
        frame = rows_to_frame(selection.runs)
        return _sorted(frame, sort, descending).reset_index(drop=True), len(selection.skipped)

    with Catalog(data_root) as catalog:
        catalog.refresh(flt.task, flt.archived)
        generation = catalog.generation
    key = (
        "runs table",
        flt.where,
        flt.task,
        tuple(flt.status),
        flt.since,
        flt.until,
        flt.archived,
        flt.tag,
        tuple(flt.runs),
        sort,
        descending,
    )
    return WARM.cached(
        data_root,
        key,
        generation,
        build,
        max_age=lambda value: LIVE_TABLE_S if (value[0]["status"] == "running").any() else None,
    )


def runs_page(
    data_root: os.PathLike,
    flt: RunFilter,
    sort: Optional[str] = None,
    descending: bool = False,
    limit: Any = 50,
    offset: Any = 0,
    columns: Sequence[str] = (),
) -> Dict[str, Any]:
    """One page of the runs table.

    The selected, sorted table is kept per index generation (see :mod:`RLA.query.warm`):
    paging, re-sorting an unchanged selection and going back to it cost only the page.

    Returns:
        ``{"total", "offset", "limit", "columns" (shown), "available" (every column:
        base, hyper-parameters, metric summaries), "params", "metrics", "status_counts",
        "rows": [{column: value, "tags": [...], "note": str}]}``.
    """
    limit_n, offset_n = _limit(limit, 50, MAX_LIMIT), _limit(offset, 0, 0)
    ordered, skipped = _table(data_root, flt, sort, descending)
    available = list(ordered.columns)
    shown = [c for c in (columns or DEFAULT_COLUMNS) if c in ordered.columns]
    if "index" not in shown:
        shown.insert(0, "index")
    page = ordered.iloc[offset_n : offset_n + limit_n]
    rows = []
    for record in page[shown + ["log_dir"]].to_dict("records"):
        notes = read_annotations(record.pop("log_dir"))
        rows.append(dict(jsonable(record), tags=list(notes.tags), note=notes.note))
    return {
        "total": len(ordered),
        "offset": offset_n,
        "limit": limit_n,
        "columns": shown,
        "available": available,
        "params": ordered.attrs.get("param_columns", []),
        "metrics": sorted({c[c.index("(") + 1 : -1] for c in ordered.attrs.get("metric_columns", [])}),
        "status_counts": jsonable(ordered["status"].value_counts().to_dict()) if len(ordered) else {},
        "skipped": skipped,
        "rows": rows,
    }


def task_counts(data_root: os.PathLike, archived: Optional[bool] = False) -> Dict[str, int]:
    """``{task: number of runs}`` (the page builds the task tree from the ``/`` in names), in SQL."""
    from RLA.query import Catalog

    with Catalog(data_root) as catalog:
        return catalog.task_counts(archived)


def statuses(data_root: os.PathLike, indices: Sequence[str]) -> Dict[str, str]:
    """The current status of each run named (read from its ``run.json`` now, for live refresh).

    Runs that no longer exist (deleted, moved) are left out.
    """
    from RLA.errors import RLAError
    from RLA.fs import read_json
    from RLA.manager.run_info import effective_status
    from RLA.ui.lookup import resolve_run

    out: Dict[str, str] = {}
    for index in list(indices)[:MAX_LIMIT]:
        try:
            info = read_json(resolve_run(data_root, index).run_info_file)
        except (RLAError, OSError, ValueError):
            continue
        out[index] = effective_status(info) if isinstance(info, dict) else "unknown"
    return out
