"""Load stage of a plot: each selected run's ``(x, y)`` per metric, filtered and scaled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from RLA.plot.options import ValueFilterFn, XBound
from RLA.plot.resample import split_xy
from RLA.query.selection import RunRow

XY = Tuple[np.ndarray, np.ndarray]


@dataclass
class Loaded:
    """``curves[metric][run index] = (x, y)`` and the runs whose ``progress.csv`` was unreadable."""

    curves: Dict[str, Dict[str, XY]]
    skipped: List[Tuple[str, str]] = field(default_factory=list)


def adjust(
    xy: XY, value_filter: Optional[ValueFilterFn] = None, scale: Optional[Callable[..., object]] = None
) -> XY:
    """One run's values after ``value_filter`` (e.g. clipping, outliers) and then ``scale``."""
    x, y = xy
    if value_filter is not None:
        x, y = value_filter(x, y)
    if scale is not None:
        y = np.asarray(scale(y), dtype=float)
    return x, y


def load(
    rows: Sequence[RunRow],
    metrics: Sequence[str],
    x_key: str = "time-step",
    x_bound: XBound = None,
    value_filter: Optional[ValueFilterFn] = None,
    scale_dict: Optional[Dict[str, Callable[..., object]]] = None,
) -> Loaded:
    """Read ``metrics`` of ``rows`` against ``x_key`` (rows outside ``x_bound`` left out).

    Args:
        rows: the selected runs.
        metrics: ``progress.csv`` columns.
        x_key: the x column.
        x_bound: keep ``x <= x_bound``, or ``lo <= x <= hi`` for a pair.
        value_filter: ``fn(x, y) -> (x, y)`` applied to each run's values first.
        scale_dict: ``{metric: fn}`` applied to the values next (e.g. ``np.log``).

    Raises:
        QueryError: a metric (or the x column) that none of the runs logged.
    """
    from RLA.query import load_curves

    frame = load_curves(list(rows), metrics, x=x_key, x_bound=x_bound)
    curves: Dict[str, Dict[str, XY]] = {}
    for metric in metrics:
        scale = (scale_dict or {}).get(metric)
        part = frame[frame["metric"] == metric]
        curves[metric] = {index: adjust((x, y), value_filter, scale) for index, x, y in split_xy(part, x_key)}
    return Loaded(curves, list(frame.attrs.get("skipped", [])))
