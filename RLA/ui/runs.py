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


def select(data_root: Any, flt: RunFilter) -> Any:
    """The :class:`RLA.query.Selection` of ``flt`` (tag and explicit runs applied).

    ``data_root`` may be an open catalog (e.g. :meth:`RunsSource.catalog`, which answers
    from the latest background refresh).

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


class RunsSource:
    """The dashboard's view of one data root: the background refresh and the warm table.

    Requests read the index as of the last refresh (see :mod:`RLA.ui.fresh` for how fresh
    that is) and the table built from it (:mod:`RLA.ui.table`); they never walk the tree or
    decode records themselves, except the first one and after an idle spell.
    """

    def __init__(self, data_root: os.PathLike, **refresh_options: Any) -> None:
        from RLA.ui.fresh import Refresher
        from RLA.ui.table import WarmTable

        self.data_root = data_root
        self.table = WarmTable()
        self.refresher = Refresher(data_root, on_refresh=self.table.update, **refresh_options)

    def catalog(self) -> Any:
        """A catalog (context manager) answering from the latest refresh."""
        from RLA.ui.fresh import SnapshotCatalog

        return SnapshotCatalog(self.data_root, self.refresher.snapshot())

    def close(self) -> None:
        self.refresher.close()


def _table(source: RunsSource, flt: RunFilter) -> Tuple[Any, int]:
    """The rows of ``flt`` (unsorted, current statuses) and the number of skipped runs."""
    from RLA.query import parse_query
    from RLA.query.names import check_query_names
    from RLA.query.selection import check_task
    from RLA.ui.table import current_status, filter_mask

    with source.catalog() as catalog:
        if catalog.snapshot.private:  # a read-only data root: an index private to each query
            selection = select(catalog, flt)
            return rows_to_frame_now(selection.runs), len(selection.skipped)
        damaged = catalog.refresh(flt.task, flt.archived)
        state = source.table.state
        frame = state.frame
        status = current_status(state, frame)
        mask = filter_mask(frame, status, flt.task, flt.archived)
        if flt.task is not None:  # an unknown task is an error (a task whose runs are filtered out is not)
            check_task(catalog, flt.task, int(mask.sum()) + len(damaged))
        mask &= filter_mask(frame, status, None, None, flt.status, flt.since, flt.until)
        if flt.where:
            query = parse_query(flt.where)
            check_query_names(catalog, query, flt.task, flt.archived, damaged.values())
            mask &= state.mask_of(source.table.matching(catalog, state, query))
        skipped = len(damaged) + len(catalog.undecodable)
    if flt.runs:
        mask &= frame["index"].isin(set(flt.runs)).to_numpy(dtype=bool)
    chosen = frame[mask].assign(status=status[mask])
    if flt.tag:
        keep = [flt.tag in read_annotations(log_dir).tags for log_dir in chosen["log_dir"]]
        chosen = chosen[keep]
    return chosen, skipped


def rows_to_frame_now(rows: Sequence[Any]) -> Any:
    """:func:`RLA.query.rows_to_frame` with the key column of :mod:`RLA.ui.table`."""
    from RLA.query import rows_to_frame
    from RLA.query.tree import run_key
    from RLA.ui.table import KEY

    frame = rows_to_frame(rows)
    frame[KEY] = [run_key(row.layout) for row in rows]
    return frame


def runs_page(
    source: RunsSource,
    flt: RunFilter,
    sort: Optional[str] = None,
    descending: bool = False,
    limit: Any = 50,
    offset: Any = 0,
    columns: Sequence[str] = (),
) -> Dict[str, Any]:
    """One page of the runs table.

    Returns:
        ``{"total", "offset", "limit", "columns" (shown), "available" (every column:
        base, hyper-parameters, metric summaries), "params", "metrics", "status_counts",
        "rows": [{column: value, "tags": [...], "note": str}]}``.
    """
    from RLA.ui.table import KEY

    limit_n, offset_n = _limit(limit, 50, MAX_LIMIT), _limit(offset, 0, 0)
    chosen, skipped = _table(source, flt)
    ordered = _sorted(chosen, sort, descending)
    # the hyper-parameters and metrics of the chosen runs only (the table holds every run's)
    all_params, all_metrics = chosen.attrs.get("param_columns", []), chosen.attrs.get("metric_columns", [])
    params = [p for p in all_params if chosen[p].notna().any()]
    metric_cols = [m for m in all_metrics if chosen[m].notna().any()]
    dropped = set(all_params + all_metrics) - set(params + metric_cols)
    available = [c for c in chosen.columns if c != KEY and c not in dropped]
    shown = [c for c in (columns or DEFAULT_COLUMNS) if c in available]
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
        "params": params,
        "metrics": sorted({c[c.index("(") + 1 : -1] for c in metric_cols}),
        "status_counts": jsonable(ordered["status"].value_counts().to_dict()) if len(ordered) else {},
        "skipped": skipped,
        "rows": rows,
    }


def task_counts(source: RunsSource, archived: Optional[bool] = False) -> Dict[str, int]:
    """``{task: number of runs}`` (the page builds the task tree from the ``/`` in names)."""
    with source.catalog() as catalog:
        if catalog.snapshot.private:
            return catalog.task_counts(archived)
    frame = source.table.state.frame
    if archived is not None:
        frame = frame[frame["archived"] == bool(archived)]
    return {str(task): int(n) for task, n in sorted(frame["task"].value_counts().items())}


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
