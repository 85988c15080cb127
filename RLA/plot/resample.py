"""Put curves of different runs on one x grid: bin-average, interpolate, EMA-smooth.

Runs rarely log at the same steps. Each run is mapped onto a common grid: a grid point
takes the mean of the run's raw points in its bin, or the linear interpolation of its
neighbours when the bin is empty; points outside the run's own x range are NaN (so runs
of unequal length are explicit, never extrapolated). Smoothing is a symmetric EMA (the
average of a forward and a backward pass) whose decay is counted in grid steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from RLA.errors import RLAError


def common_grid(
    curves: Sequence[Tuple[np.ndarray, np.ndarray]], points: int, vary_len: bool = False
) -> np.ndarray:
    """The x grid shared by ``curves``.

    Args:
        curves: ``(x, y)`` arrays per run (x ascending).
        points: number of grid points; ``0`` uses the union of all logged x values.
        vary_len: span from the earliest start to the latest end (runs are NaN beyond their
            own range); by default only the range every run covers (longer runs are cut).

    Raises:
        RLAError: no curve has data, or the runs share no x range.
    """
    curves = [(x, y) for x, y in curves if len(x)]
    if not curves:
        raise RLAError(
            "No data to plot",
            expected="runs with at least one logged value",
            found="empty curves",
            fix="check the metrics and the x bound",
        )
    starts = [float(x[0]) for x, _ in curves]
    ends = [float(x[-1]) for x, _ in curves]
    low, high = (min(starts), max(ends)) if vary_len else (max(starts), min(ends))
    if low > high:
        raise RLAError(
            "The runs share no x range",
            expected="overlapping x ranges",
            found=f"latest start {low:g} > earliest end {high:g}",
            fix="pass vary_len_plot=True to plot runs of unequal length",
        )
    if points <= 0:
        union = np.unique(np.concatenate([x for x, _ in curves]))
        return union[(union >= low) & (union <= high)]
    if low == high:
        return np.array([low])
    return np.linspace(low, high, int(points))


def to_grid(x: np.ndarray, y: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """One run's values on ``grid`` (bin means, else interpolation; NaN outside its range)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    out = np.full(grid.shape, np.nan)
    if x.size == 0:
        return out
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    inside = (grid >= x[0]) & (grid <= x[-1])
    if grid.size == 1:
        out[inside] = np.interp(grid[inside], x, y)
        return out
    edges = np.concatenate(([-np.inf], (grid[1:] + grid[:-1]) / 2, [np.inf]))
    which = np.searchsorted(edges, x, side="right") - 1
    sums = np.bincount(which, weights=y, minlength=grid.size)
    hits = np.bincount(which, minlength=grid.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / hits
    out[inside] = np.where(hits[inside] > 0, means[inside], np.interp(grid[inside], x, y))
    return out


def ema(values: np.ndarray, decay_steps: float) -> np.ndarray:
    """Symmetric exponential moving average over the finite span of ``values``.

    Args:
        values: values on an evenly spaced grid (NaN outside the run).
        decay_steps: the EMA's time constant in grid steps; ``<= 0`` returns a copy.
    """
    out = np.array(values, dtype=float)
    if decay_steps <= 0:
        return out
    finite = np.flatnonzero(np.isfinite(out))
    if finite.size < 2:
        return out
    lo, hi = finite[0], finite[-1] + 1
    span = out[lo:hi].copy()
    # Gaps inside the span (should not happen after to_grid) are bridged by interpolation.
    gaps = ~np.isfinite(span)
    if gaps.any():
        idx = np.arange(span.size)
        span[gaps] = np.interp(idx[gaps], idx[~gaps], span[~gaps])
    keep = float(np.exp(-1.0 / decay_steps))

    def one_pass(seq: np.ndarray) -> np.ndarray:
        result = np.empty_like(seq)
        acc = seq[0]
        norm = 1.0
        result[0] = acc
        for i in range(1, seq.size):
            # Bias-corrected EMA: the start is not pulled towards zero.
            acc = keep * acc + seq[i]
            norm = keep * norm + 1.0
            result[i] = acc / norm
        return result

    out[lo:hi] = (one_pass(span) + one_pass(span[::-1])[::-1]) / 2
    return out


def stack(
    curves: Sequence[Tuple[np.ndarray, np.ndarray]], grid: np.ndarray, smooth_step: float = 0.0
) -> Tuple[np.ndarray, np.ndarray]:
    """``(raw, smoothed)`` matrices ``runs x points`` of ``curves`` on ``grid``."""
    raw = np.vstack([to_grid(x, y, grid) for x, y in curves]) if curves else np.empty((0, grid.size))
    smoothed = ema_rows(raw, smooth_step) if smooth_step > 0 and len(raw) else raw
    return raw, smoothed


def ema_rows(matrix: np.ndarray, decay_steps: float) -> np.ndarray:
    """:func:`ema` of each row of ``matrix``, bit for bit, all rows in one pass.

    Each row's forward and backward passes are columns of one ``points x 2 rows`` table,
    run together: the same multiplications, additions and divisions per value as
    :func:`ema`, in the same order, so the same bits; a column starts (``acc`` = its first
    value, ``norm`` = 1) where its row's finite span does (rows of unequal length).
    """
    out = np.array(matrix, dtype=float)
    if decay_steps <= 0 or out.size == 0:
        return out
    keep = float(np.exp(-1.0 / decay_steps))
    found = [(i, _span(row)) for i, row in enumerate(out)]
    spans = [(i, span) for i, span in found if span is not None]
    if not spans:
        return out
    points, n = out.shape[1], len(spans)
    table = np.full((points, 2 * n), np.nan)  # forward columns, then backward ones
    starts = np.empty(2 * n, dtype=np.intp)
    for k, (_, (lo, hi, values)) in enumerate(spans):
        table[lo:hi, k] = values
        table[points - hi : points - lo, n + k] = values[::-1]
        starts[k], starts[n + k] = lo, points - hi
    passes = _ema_columns(table, starts, keep)
    for k, (i, (lo, hi, _)) in enumerate(spans):
        forward = passes[lo:hi, k]
        backward = passes[points - hi : points - lo, n + k][::-1]
        out[i, lo:hi] = (forward + backward) / 2
    return out


def _span(row: np.ndarray) -> Optional[Tuple[int, int, np.ndarray]]:
    """``(lo, hi, values)``: the finite span of ``row`` with inner gaps interpolated as
    :func:`ema` does; None when fewer than two values are finite (the row stays as it is)."""
    finite = np.flatnonzero(np.isfinite(row))
    if finite.size < 2:
        return None
    lo, hi = int(finite[0]), int(finite[-1]) + 1
    span = row[lo:hi].copy()
    gaps = ~np.isfinite(span)
    if gaps.any():
        idx = np.arange(span.size)
        span[gaps] = np.interp(idx[gaps], idx[~gaps], span[~gaps])
    return lo, hi, span


def _ema_columns(table: np.ndarray, starts: np.ndarray, keep: float) -> np.ndarray:
    """The bias-corrected EMA of each column of ``table`` from its start row down (values
    above a column's start are left undefined)."""
    result = np.empty_like(table)
    acc = table[0].copy()
    norm = np.ones(table.shape[1])
    result[0] = acc
    first = {int(s): np.flatnonzero(starts == s) for s in np.unique(starts)}
    for i in range(1, table.shape[0]):
        acc = keep * acc + table[i]
        norm = keep * norm + 1.0
        result[i] = acc / norm
        restart = first.get(i)
        if restart is not None:  # these columns begin here: acc = value, norm = 1
            acc[restart] = table[i, restart]
            norm[restart] = 1.0
            result[i, restart] = acc[restart]
    return result


@dataclass
class Resampled:
    """One group's runs on its grid: ``raw`` and ``smooth`` are ``runs x points`` (NaN outside a run).

    ``cut_at`` is the grid's end when longer runs were cut to the shortest (else None).
    """

    grid: np.ndarray
    raw: np.ndarray
    smooth: np.ndarray
    cut_at: Optional[float] = None


def resample_group(
    curves: Sequence[Tuple[np.ndarray, np.ndarray]], points: int, smooth_step: float, vary_len: bool = False
) -> Resampled:
    """Resample and smooth stage: ``curves`` of one group on a common grid, raw and EMA-smoothed.

    Raises:
        RLAError: no curve has data, or the runs share no x range.
    """
    grid = common_grid(curves, points, vary_len)
    longest = max(float(x[-1]) for x, _ in curves)
    cut_at = None if vary_len or grid[-1] >= longest else float(grid[-1])
    raw, smooth = stack(curves, grid, smooth_step)
    return Resampled(grid, raw, smooth, cut_at)


def split_xy(frame: Any, x: str) -> List[Tuple[str, np.ndarray, np.ndarray]]:
    """``[(index, x, y)]`` per run from a long curves frame of one metric."""
    out = []
    for index, part in frame.groupby("index", sort=False):
        out.append((str(index), part[x].to_numpy(dtype=float), part["value"].to_numpy(dtype=float)))
    return out


def check_points(points: Optional[int]) -> int:
    """Validate the ``resample`` argument."""
    if points is None:
        return 0
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 0:
        raise RLAError(
            "Bad resample value",
            expected="an integer >= 0 (0: no resampling)",
            found=repr(points),
            fix="pass e.g. resample=256",
        )
    return int(points)
