"""How a frame of runs shows in a notebook: useful columns first, readable times, no empty columns.

:func:`RLA.query.list_runs` returns a :class:`RunFrame`: a real ``pandas.DataFrame`` (every
pandas operation works and keeps the type) whose notebook view (``_repr_html_``) is
:func:`display_view` of it. The data itself is never changed: ``frame["start_time"]`` stays
a datetime column and every column is still there.
"""

from __future__ import annotations

from typing import Any, List

import pandas as pd

from RLA.query.table import MISSING, TIME_FORMAT, empty_columns

#: Shown first, in this order, when present: then the hyper-parameters that vary between
#: the runs, the metric summaries, and every other column.
LEADING = ("index", "status", "start_time")
#: Shown last (long or rarely needed).
TRAILING = ("log_dir", "name", "param_source", "ip", "parent", "archived")


def _param_columns(frame: pd.DataFrame) -> List[str]:
    from RLA.query.frame import BASE_COLUMNS

    known = frame.attrs.get("param_columns")
    if known is None:
        known = [c for c in frame.columns if c not in BASE_COLUMNS and not _is_metric(c)]
    return [c for c in known if c in frame.columns]


def _is_metric(column: Any) -> bool:
    return isinstance(column, str) and column.endswith(")") and "(" in column


def _varies(series: pd.Series) -> bool:
    return series.astype(str).nunique(dropna=False) > 1


def display_columns(frame: pd.DataFrame) -> List[Any]:
    """The columns of ``frame`` in display order, without those empty for every row."""
    params = _param_columns(frame)
    varying = [p for p in params if len(frame) < 2 or _varies(frame[p])]
    metrics = [c for c in frame.columns if _is_metric(c)]
    lasts = [c for c in metrics if str(c).startswith("last(")]
    head = [c for c in LEADING if c in frame.columns] + varying + lasts
    tail = [c for c in TRAILING if c in frame.columns and c not in head]
    middle = [c for c in frame.columns if c not in head and c not in tail]
    order = head + middle + tail
    empty = set(empty_columns(frame, order)) if len(frame) else set()
    return [c for c in order if c not in empty]


def display_view(frame: pd.DataFrame) -> pd.DataFrame:
    """A plain DataFrame for reading: :func:`display_columns`, times to the second as text."""
    view = pd.DataFrame(frame[display_columns(frame)])
    for i in range(view.shape[1]):
        if pd.api.types.is_datetime64_any_dtype(view.dtypes.iloc[i]):
            column = view.iloc[:, i]
            view.isetitem(i, column.dt.strftime(TIME_FORMAT).where(column.notna(), ""))
    return view


class RunFrame(pd.DataFrame):
    """One row per run: a ``pandas.DataFrame`` that shows its useful columns first in a
    notebook (see the module docstring)."""

    @property
    def _constructor(self) -> Any:
        return RunFrame

    def _repr_html_(self) -> Any:
        """The notebook view: :func:`display_view`, ``-`` for a missing cell, pandas' limits."""
        if not pd.get_option("display.notebook_repr_html"):
            return None
        try:
            view = display_view(self)
        except Exception:  # a frame reshaped beyond recognition: show it as pandas would
            return pd.DataFrame(self)._repr_html_()
        return view.to_html(
            notebook=True,
            na_rep=MISSING,
            max_rows=pd.get_option("display.max_rows"),
            max_cols=pd.get_option("display.max_columns"),
            show_dimensions=pd.get_option("display.show_dimensions"),
        )


def as_run_frame(frame: pd.DataFrame) -> RunFrame:
    """``frame`` as a :class:`RunFrame` (the same data and ``attrs``, no copy)."""
    out = RunFrame(frame)
    out.attrs = dict(frame.attrs)
    return out
