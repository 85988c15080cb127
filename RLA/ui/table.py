"""The dashboard's warm runs table: every run decoded once, kept in step with the index.

:class:`WarmTable` holds one row per run of the data root (active and archived), built with
RLA's own :func:`RLA.query.rows_to_frame`. After each refresh of the index
(:mod:`RLA.ui.fresh`) it decodes again only the runs whose signature changed, so a request
never decodes records. A ``where`` filter is answered by the index
(:func:`RLA.query.sqlwhere.compile_query`): the runs its *must* condition holds for are in,
and the few its *may* condition cannot decide in SQL are checked by RLA's Python evaluator on
the decoded rows, as :func:`RLA.query.select_runs` does. Task, archived, status, date and run
filters are then applied to the frame with the same rules as ``select_runs``; the status of a
run recorded as running is computed again on every request (its process may have ended).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Tuple

from RLA.query import Catalog, RunRow, parse_when, rows_to_frame
from RLA.query.tree import run_key

#: The column holding each row's index key (``arc:`` prefix for archived runs); never shown.
KEY = "_key"
#: Keys fetched from the index per SQL statement.
CHUNK = 500
#: ``where`` answers remembered per table version.
MAX_ANSWERS = 32


@dataclass(frozen=True)
class TableState:
    """One consistent version of the table (replaced whole, never changed in place)."""

    version: int = 0
    frame: Any = None
    #: ``{key: (signature, RunRow)}``.
    rows: Dict[str, Tuple[str, RunRow]] = field(default_factory=dict)
    #: Keys of the runs whose record says ``running`` (their status is computed per request).
    live: FrozenSet[str] = frozenset()
    #: ``{key: row position in frame}``.
    pos: Dict[str, int] = field(default_factory=dict)

    def mask_of(self, keys: Iterable[str]) -> Any:
        """A boolean array over the frame's rows, true for ``keys``."""
        import numpy as np

        mask = np.zeros(len(self.pos), dtype=bool)
        mask[[self.pos[key] for key in keys if key in self.pos]] = True
        return mask


def _ordered_columns(frame: Any) -> Tuple[List[str], List[str], List[str]]:
    """(columns in ``rows_to_frame`` order, hyper-parameter columns, metric columns)."""
    from RLA.query.frame import BASE_COLUMNS

    metric = sorted({c for c in frame.columns if c.endswith(")") and "(" in c}, key=_metric_order)
    params = sorted(c for c in frame.columns if c not in BASE_COLUMNS and c != KEY and c not in metric)
    return [c for c in BASE_COLUMNS if c in frame.columns] + params + metric + [KEY], params, metric


def _metric_order(column: str) -> Tuple[str, int]:
    from RLA.query.expr import METRIC_FUNCS

    func, metric = column[: column.index("(")], column[column.index("(") + 1 : -1]
    return metric, METRIC_FUNCS.index(func) if func in METRIC_FUNCS else len(METRIC_FUNCS)


class WarmTable:
    """Every run of one data root as a frame, updated incrementally from the index."""

    def __init__(self) -> None:
        self.state = TableState()
        self._generation: Optional[int] = None
        self._answers: "OrderedDict[Any, FrozenSet[str]]" = OrderedDict()
        self._lock = threading.Lock()

    def update(self, catalog: Catalog) -> TableState:
        """Decode the runs that are new or changed in ``catalog`` (already refreshed)."""
        old = self.state
        generation = catalog.generation
        if old.frame is not None and generation == self._generation:
            return old  # no stored run changed since the last update (by any process)
        current = dict(catalog.conn.execute("SELECT key, sig FROM runs"))
        changed = [key for key, sig in current.items() if old.rows.get(key, ("",))[0] != sig]
        removed = [key for key in old.rows if key not in current]
        if old.frame is not None and not changed and not removed:
            self._generation = generation
            return old
        rows = {k: v for k, v in old.rows.items() if k in current}
        for start in range(0, len(changed), CHUNK):
            chunk = changed[start : start + CHUNK]
            where = f"key IN ({', '.join('?' * len(chunk))})"
            for layout, record in catalog.fetch(None, None, where, chunk):
                key = run_key(layout)
                rows[key] = (current.get(key, ""), RunRow(layout, record))
        frame = _merge(old.frame, rows, changed, removed)
        pos = {key: i for i, key in enumerate(frame[KEY])}
        state = TableState(old.version + 1, frame, rows, _live(rows), pos)
        self.state, self._generation = state, generation
        return state

    def matching(self, catalog: Catalog, state: TableState, query: Any) -> FrozenSet[str]:
        """Keys of the runs of ``state`` that satisfy ``query`` (SQL, then Python for the rest)."""
        from RLA.query.sqlwhere import compile_query

        cache_key = (state.version, query.text)
        with self._lock:
            if cache_key in self._answers:
                return self._answers[cache_key]
        (may, may_args), (must, must_args) = compile_query(query)
        if (may, tuple(may_args)) == (must, tuple(must_args)):  # SQL decides every run
            sql, args = f"SELECT key, 1 FROM runs WHERE {must}", tuple(must_args)
        else:  # one pass: the candidates, and whether SQL alone is sure of each
            sql, args = f"SELECT key, ({must}) FROM runs WHERE {may}", tuple(must_args) + tuple(may_args)
        sure = set()
        for key, certain in catalog.conn.execute(sql, args):
            row = state.rows.get(key)
            if certain or (row is not None and query.matches(row[1].view())):
                sure.add(key)
        answer = frozenset(sure)
        with self._lock:
            self._answers[cache_key] = answer
            while len(self._answers) > MAX_ANSWERS:
                self._answers.popitem(last=False)
        return answer


def _live(rows: Dict[str, Tuple[str, RunRow]]) -> FrozenSet[str]:
    return frozenset(
        key for key, (_, row) in rows.items() if (row.record.info or {}).get("status") == "running"
    )


def _merge(frame: Any, rows: Dict[str, Tuple[str, RunRow]], changed: List[str], removed: List[str]) -> Any:
    """``frame`` without the changed and removed runs, plus the changed runs' new rows."""
    import pandas as pd

    fresh = [rows[key][1] for key in changed if key in rows]
    part = rows_to_frame(fresh)
    part[KEY] = [run_key(row.layout) for row in fresh]
    if frame is None:
        merged = part
    else:
        kept = frame[~frame[KEY].isin(set(changed) | set(removed))]
        merged = pd.concat([kept, part], ignore_index=True) if len(part) else kept.reset_index(drop=True)
    columns, params, metrics = _ordered_columns(merged)
    merged = merged[columns]
    merged.attrs["param_columns"], merged.attrs["metric_columns"] = params, metrics
    return merged


def current_status(state: TableState, frame: Any) -> Any:
    """``frame``'s status column with the status of each run recorded as running computed now."""
    status = frame["status"]
    if not state.live:
        return status
    status = status.copy()
    for key in state.live:
        status.iat[state.pos[key]] = _now(state.rows[key][1]).status
    return status


def _now(row: RunRow) -> RunRow:
    """A new row of the same run (a RunRow remembers the status it computed first)."""
    return RunRow(row.layout, row.record)


def filter_mask(
    frame: Any,
    status: Any,
    task: Optional[str],
    archived: Optional[bool],
    statuses: Iterable[str] = (),
    since: Any = None,
    until: Any = None,
) -> Any:
    """The rows kept by the task, archived, status and date filters (``select_runs``' rules)."""
    import numpy as np

    mask = np.ones(len(frame), dtype=bool)
    if archived is not None:
        mask &= (frame["archived"] == bool(archived)).to_numpy(dtype=bool)
    if task is not None:
        tasks = frame["task"].astype(object)
        mask &= ((tasks == task) | tasks.str.startswith(task + "/")).to_numpy(dtype=bool)
    wanted = list(statuses)
    if wanted:
        mask &= status.isin(wanted).to_numpy(dtype=bool)
    since_t, until_t = parse_when(since), parse_when(until, end=True)
    if since_t is not None:
        mask &= (frame["start_time"] >= since_t).to_numpy(dtype=bool)
    if until_t is not None:
        mask &= (frame["start_time"] <= until_t).to_numpy(dtype=bool)
    return mask
