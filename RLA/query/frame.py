"""Turn selected runs into the one-row-per-run pandas DataFrame users query."""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any, Dict, List, Optional, Sequence

from RLA.layout import LOG
from RLA.query.expr import METRIC_FUNCS
from RLA.query.selection import RunRow, _name_ip
from RLA.query.stored import local_time

#: Leading columns, in order; hyper-parameters then ``last(m)``/``min(m)``/``max(m)`` follow.
BASE_COLUMNS = [
    "index",
    "task",
    "status",
    "start_time",
    "end_time",
    "host",
    "ip",
    "archived",
    "parent",
    "time_step",
    "n_rows",
    "param_source",
    "name",
    "log_dir",
]


def metric_column(func: str, metric: str) -> str:
    """Name of a metric summary column, e.g. ``last(return)``."""
    return f"{func}({metric})"


def _static_item(row: RunRow, log_root: str) -> Dict[str, Any]:
    """The cells of a run's row that only change when its record does (no status, no metrics)."""
    info, layout, record = row.record.info, row.layout, row.record
    item: Dict[str, Any] = {
        "index": row.index,
        "task": layout.task,
        "start_time": row.start_time,
        "end_time": local_time(info.get("end_time")),
        "host": info.get("host"),
        "ip": info.get("ip") or _name_ip(layout.name),
        "archived": layout.archived,
        "parent": info.get("parent"),
        "time_step": record.time_step,
        "n_rows": record.n_rows,
        "param_source": record.param_source,
        "name": layout.name,
        "log_dir": os.path.join(log_root, layout.relative),
    }
    for key, value in record.params.items():
        item[key] = tuple(value) if isinstance(value, list) else value
    return item


def _is_time(value: Any) -> bool:
    """Whether a time column's cell is a time or missing (not a hyper-parameter's value)."""
    return value is None or isinstance(value, _dt.datetime) or (isinstance(value, float) and value != value)


def rows_to_frame(
    rows: Sequence[RunRow], stats: Sequence[str] = METRIC_FUNCS, columns: Optional[Sequence[str]] = None
) -> Any:
    """Build the DataFrame of :func:`RLA.query.list_runs` from selected runs.

    Args:
        rows: the runs.
        stats: which metric summaries become columns (subset of last, min, max).
        columns: only these columns, in this order (names no run has are left out); the
            other cells are never built.
    """
    import pandas as pd

    records: List[Dict[str, Any]] = []
    log_roots: Dict[Any, str] = {}  # pathlib per row costs more than the rest of the row
    param_keys: Dict[str, None] = {}
    metric_keys: Dict[str, None] = {}
    for row in rows:
        root_key = (row.layout.data_root, row.layout.archived)
        if root_key not in log_roots:
            log_roots[root_key] = os.fspath(row.layout.type_root(LOG))
        item = _static_item(row, log_roots[root_key])
        item["status"] = row.status
        param_keys.update(dict.fromkeys(row.record.params))
        for metric, triple in row.record.metrics.items():
            metric_keys.setdefault(metric, None)
            for func in stats:
                item[metric_column(func, metric)] = triple[METRIC_FUNCS.index(func)]
        records.append(item)
    params = sorted(k for k in param_keys if k not in BASE_COLUMNS)
    metric_cols = [metric_column(f, m) for m in sorted(metric_keys) for f in stats]
    names = BASE_COLUMNS + params + metric_cols
    if columns is not None:
        present = set(names)
        names = [name for name in dict.fromkeys(columns) if name in present]
    nan = float("nan")  # what from_records puts in a cell a row lacks
    cells: Dict[str, Any] = {name: [item.get(name, nan) for item in records] for name in names}
    if records:  # naive local times; numpy converts None to NaT (cheaper than pd.to_datetime)
        import numpy as np

        for name in ("start_time", "end_time"):
            if name in cells:
                if all(_is_time(value) for value in cells[name]):  # else a hyper-parameter
                    cells[name] = np.array(cells[name], dtype="datetime64[us]")  # of that name: as is
    # The dict is in column order; naming the columns again makes pandas reindex (slower).
    frame = pd.DataFrame(cells, copy=False) if records else pd.DataFrame(cells, columns=names)
    frame.attrs["param_columns"] = [p for p in params if p in cells]
    frame.attrs["metric_columns"] = [m for m in metric_cols if m in cells]
    return frame
