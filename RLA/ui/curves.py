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
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

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
    """Import what a chart needs (pandas, the plot statistics, the batch CSV reader), ahead of
    the first chart request. Run in a thread at start-up: none of these modules imports the
    dashboard's, so a request importing them meanwhile only waits for them."""
    import pandas  # noqa: F401

    import RLA.plot.grouping  # noqa: F401
    import RLA.plot.resample  # noqa: F401
    import RLA.plot.stats  # noqa: F401
    import RLA.query.curves  # noqa: F401
    import RLA.query.progress_batch  # noqa: F401


def _on_grid(
    metric: str, group: Any, data: List[Tuple[np.ndarray, np.ndarray]], opts: CurveOptions
) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """One group's grid, its runs on it (``runs x points``, not smoothed yet) and its notes."""
    from RLA.plot.resample import common_grid, stack

    grid = common_grid(data, opts.resample, opts.vary_len)
    longest = max(float(x[-1]) for x, _ in data)
    notes = []
    if not opts.vary_len and grid[-1] < longest:
        notes.append(
            f"{metric}: {group.legend!r}: {len(data)} runs cut to x <= {grid[-1]:g} (the shortest run); "
            "tick 'runs of unequal length' (vary_len=1) to keep the tails"
        )
    raw, _ = stack(data, grid)
    return grid, raw, notes


def _smoothed(raws: List[np.ndarray], step: float) -> List[np.ndarray]:
    """``stack``'s smoothing of each group's runs, the groups of one grid size in one
    :func:`RLA.plot.resample.ema_rows` call (rows are smoothed independently: same bits)."""
    from RLA.plot.resample import ema_rows

    if step <= 0:
        return raws
    out = list(raws)
    for size in {raw.shape[1] for raw in raws}:
        same = [i for i, raw in enumerate(raws) if raw.shape[1] == size and len(raw)]
        if not same:
            continue
        smooth = ema_rows(np.vstack([raws[i] for i in same]), step)
        cuts = np.cumsum([len(raws[i]) for i in same])[:-1]
        for i, part in zip(same, np.split(smooth, cuts)):
            out[i] = part
    return out


def _summary(
    group: Any, grid: np.ndarray, smooth: np.ndarray, indices: List[str], opts: CurveOptions
) -> Dict[str, Any]:
    """One group's curve on its grid: center, band and runs per x (``rla plot``'s statistics)."""
    from RLA.plot.stats import aggregate, band, counts

    center = aggregate(smooth, opts.agg)
    low, high = band(smooth, center, opts.band, opts.agg, opts.samples, opts.seed)
    out = {
        "legend": group.legend,
        "n": len(smooth),
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
    return out


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
    return _cached("chart", rows, opts, lambda: _grouped(rows, opts))


def curves_json(rows: Sequence[Any], opts: CurveOptions) -> bytes:
    """:func:`grouped_curves` as the API's JSON body (what ``JSONResponse`` would send),
    encoded once per chart and kept beside it, so a chart shown again is not encoded again.

    Raises:
        RLAError, QueryError: as :func:`grouped_curves`.
    """
    if not rows:
        return _encode(grouped_curves(rows, opts))
    return _cached("chart-json", rows, opts, lambda: _encode(grouped_curves(rows, opts)))


def _encode(result: Dict[str, Any]) -> bytes:
    return json.dumps(
        result, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode()


def _cached(kind: str, rows: Sequence[Any], opts: CurveOptions, build: Callable[[], Any]) -> Any:
    """``build()`` kept with the index's other derived data (see :mod:`RLA.query.warm`): the
    same runs with the same files (signatures) and statuses give the same chart."""
    from RLA.query import WARM
    from RLA.query.tree import run_key

    key = (kind, repr(opts), tuple((run_key(r.layout), r.record.signature, r.status) for r in rows))
    return WARM.cached(rows[0].layout.data_root, key, 0, build)


def _grouped(rows: Sequence[Any], opts: CurveOptions) -> Dict[str, Any]:
    from RLA.plot.grouping import group_runs
    from RLA.query.curves import load_pieces, runs_of

    result: Dict[str, Any] = {"x": opts.x, "metrics": {}, "notes": []}
    pieces, _ = load_pieces(list(rows), opts.metrics, x=opts.x, x_bound=opts.x_bound)
    for metric in opts.metrics:
        per_run = {index: (x, y) for index, x, y in runs_of(pieces, metric)}
        placed = []  # (group, run indices, grid, runs on the grid)
        for group in group_runs([list(rows)], opts.group_by, metric):
            present = [row.index for row in group.runs if row.index in per_run]
            if not present:
                result["notes"].append(f"{metric}: group {group.legend!r} has no data")
                continue
            grid, raw, notes = _on_grid(metric, group, [per_run[i] for i in present], opts)
            result["notes"].extend(notes)
            placed.append((group, present, grid, raw))
        smooth = _smoothed([raw for _, _, _, raw in placed], opts.smooth)
        result["metrics"][metric] = [
            _summary(group, grid, rows_, present, opts)
            for (group, present, grid, _), rows_ in zip(placed, smooth)
        ]
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
