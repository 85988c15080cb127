"""Grouped learning curves for the charts page, computed by RLA's plot statistics.

The same steps as :func:`RLA.plot.plot_func` (``rla plot``) on the same selection:
:func:`RLA.plot.grouping.group_runs` splits the runs by hyper-parameter values, each group
is put on its own grid (:func:`RLA.plot.resample.common_grid`, :func:`stack` with EMA
smoothing), and :func:`RLA.plot.stats.aggregate` / :func:`band` / :func:`counts` give the
center, the band and the number of runs at each x: the numbers of ``rla plot``'s CSV.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from RLA.errors import RLAError
from RLA.ui.encode import jsonable

MAX_RESAMPLE = 10_000
MAX_INDIVIDUAL = 200


@dataclass
class CurveOptions:
    """How to group and summarise (defaults: those of ``rla plot``)."""

    metrics: List[str]
    x: str = "time-step"
    group_by: List[str] = field(default_factory=list)
    agg: str = "mean"
    band: str = "stderr"
    smooth: float = 1.0
    resample: int = 512
    x_bound: Optional[Tuple[float, float]] = None
    vary_len: bool = False
    individual: bool = False
    samples: int = 1000
    seed: int = 0


def preload() -> None:
    """Import what a chart needs (the plot statistics, the batch CSV reader), ahead of the
    first chart request."""
    import RLA.plot.grouping  # noqa: F401
    import RLA.plot.resample  # noqa: F401
    import RLA.plot.stats  # noqa: F401
    import RLA.query.curves  # noqa: F401


def _group(
    metric: str,
    group: Any,
    data: List[Tuple[np.ndarray, np.ndarray]],
    indices: List[str],
    opts: CurveOptions,
) -> Tuple[Dict[str, Any], List[str]]:
    """One group's curve on its grid (center, band, runs per x) and its notes."""
    from RLA.plot.resample import common_grid, stack
    from RLA.plot.stats import aggregate, band, counts

    grid = common_grid(data, opts.resample, opts.vary_len)
    longest = max(float(x[-1]) for x, _ in data)
    notes = []
    if not opts.vary_len and grid[-1] < longest:
        notes.append(
            f"{metric}: {group.legend!r}: {len(data)} runs cut to x <= {grid[-1]:g} (the shortest run); "
            "tick 'runs of unequal length' (vary_len=1) to keep the tails"
        )
    _, smooth = stack(data, grid, opts.smooth)
    center = aggregate(smooth, opts.agg)
    low, high = band(smooth, center, opts.band, opts.agg, opts.samples, opts.seed)
    out = {
        "legend": group.legend,
        "n": len(data),
        "x": grid,
        "center": center,
        "low": low,
        "high": high,
        "n_at_x": counts(smooth),
        "runs": [row.index for row in group.runs],
        "running": sum(1 for row in group.runs if row.status == "running"),
    }
    if opts.individual:
        out["individual"] = [{"index": i, "y": row} for i, row in list(zip(indices, smooth))[:MAX_INDIVIDUAL]]
    return out, notes


def grouped_curves(rows: Sequence[Any], opts: CurveOptions) -> Dict[str, Any]:
    """``{"x": key, "metrics": {metric: [group...]}, "notes": [...]}`` for the selected ``rows``.

    Each group: ``legend, n, x, center, low, high, n_at_x, runs`` (+ ``individual`` smoothed
    curves on the group's grid when asked).

    Raises:
        RLAError: no metric, a bad option, or runs that share no x range.
        QueryError: a metric no selected run logged.
    """
    from RLA.plot.stats import AGGREGATES, BANDS

    if not opts.metrics:
        raise RLAError("No metric to plot", expected="metric=<name>", found="none", fix="pick a metric")
    if opts.agg not in AGGREGATES or opts.band not in BANDS or not 0 <= opts.resample <= MAX_RESAMPLE:
        raise RLAError(
            "Bad chart option",
            expected=f"agg in {AGGREGATES}, band in {BANDS}, 0 <= resample <= {MAX_RESAMPLE}",
            found=f"agg={opts.agg!r}, band={opts.band!r}, resample={opts.resample}",
            fix="pick listed values",
        )
    if not rows:
        return {"x": opts.x, "metrics": {}, "notes": []}
    from RLA.query import WARM
    from RLA.query.tree import run_key

    # The same runs with the same files (signatures) and statuses give the same chart:
    # computed once, kept with the index's other derived data (see RLA.query.warm).
    key = ("chart", repr(opts), tuple((run_key(r.layout), r.record.signature, r.status) for r in rows))
    return WARM.cached(rows[0].layout.data_root, key, 0, lambda: _grouped(rows, opts))


def _grouped(rows: Sequence[Any], opts: CurveOptions) -> Dict[str, Any]:
    from RLA.plot.grouping import group_runs
    from RLA.query.curves import load_pieces, runs_of

    result: Dict[str, Any] = {"x": opts.x, "metrics": {}, "notes": []}
    pieces, _ = load_pieces(list(rows), opts.metrics, x=opts.x, x_bound=opts.x_bound)
    for metric in opts.metrics:
        per_run = {index: (x, y) for index, x, y in runs_of(pieces, metric)}
        groups = []
        for group in group_runs([list(rows)], opts.group_by, metric):
            present = [row.index for row in group.runs if row.index in per_run]
            if not present:
                result["notes"].append(f"{metric}: group {group.legend!r} has no data")
                continue
            out, notes = _group(metric, group, [per_run[i] for i in present], present, opts)
            result["notes"].extend(notes)
            groups.append(out)
        result["metrics"][metric] = groups
    return jsonable(result)


def curves_csv(result: Dict[str, Any]) -> str:
    """The plotted numbers as CSV, with the columns of ``rla plot``'s ``<stem>.csv``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "legend", "n_runs", "x", "center", "low", "high", "n_at_x"])
    for metric, groups in result["metrics"].items():
        for group in groups:
            for i, x in enumerate(group["x"]):
                writer.writerow(
                    [
                        metric,
                        group["legend"],
                        group["n"],
                        x,
                        group["center"][i],
                        group["low"][i],
                        group["high"][i],
                        group["n_at_x"][i],
                    ]
                )
    return buffer.getvalue()
