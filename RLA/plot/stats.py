"""Statistics over seeds: center (mean, median, IQM), bands (std, stderr, bootstrap CI), final window.

Every function takes a ``runs x points`` matrix with NaN where a run has no value (runs
of unequal length), and ignores the NaNs point by point.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from RLA.errors import RLAError

AGGREGATES = ("mean", "median", "iqm")
BANDS = ("std", "stderr", "ci", "none")


def _check(name: str, value: str, allowed: Tuple[str, ...]) -> None:
    if value not in allowed:
        raise RLAError(
            f"Unknown {name} {value!r}",
            expected=f"one of {', '.join(allowed)}",
            found=repr(value),
            fix=f"pass {name}={allowed[0]!r}",
        )


def iqm(matrix: np.ndarray, axis: int = 0) -> np.ndarray:
    """Interquartile mean: drop the lowest and highest ``floor(n/4)`` values, average the rest.

    Equals ``scipy.stats.trim_mean(x, 0.25)`` (as rliable uses) along ``axis``, NaN-aware.
    """
    data = np.moveaxis(np.asarray(matrix, dtype=float), axis, 0)
    ordered = np.sort(data, axis=0)  # NaNs sort last
    count = np.isfinite(ordered).sum(axis=0)
    cut = np.floor(count * 0.25).astype(int)
    rank = np.arange(ordered.shape[0]).reshape((-1,) + (1,) * (ordered.ndim - 1))
    keep = (rank >= cut) & (rank < count - cut)
    kept = (count - 2 * cut).astype(float)
    total = np.where(keep, np.nan_to_num(ordered), 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(kept > 0, total / kept, np.nan)


def aggregate(matrix: np.ndarray, how: str = "mean", axis: int = 0) -> np.ndarray:
    """The center of each point over runs: ``mean``, ``median`` or ``iqm``."""
    _check("aggregate", how, AGGREGATES)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN points stay NaN
        if how == "mean":
            return np.nanmean(matrix, axis=axis)
        if how == "median":
            return np.nanmedian(matrix, axis=axis)
    return iqm(matrix, axis=axis)


def counts(matrix: np.ndarray) -> np.ndarray:
    """How many runs have a value at each point."""
    return np.isfinite(matrix).sum(axis=0)


def sample_std(matrix: np.ndarray) -> np.ndarray:
    """Sample standard deviation (ddof=1) per point; 0 where only one run has a value."""
    n = counts(matrix)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        std = np.nanstd(matrix, axis=0, ddof=1)
    return np.where(n > 1, std, np.where(n == 1, 0.0, np.nan))


def bootstrap_ci(
    matrix: np.ndarray, how: str = "mean", samples: int = 1000, level: float = 0.95, seed: int = 0
) -> Tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap confidence interval of the ``how`` aggregate at each point.

    Runs are resampled with replacement ``samples`` times (a fixed seed: reproducible).
    The resampled aggregates are kept one row per point (``points x samples``), the layout
    the percentiles need (see :func:`row_percentiles`).
    """
    matrix = np.asarray(matrix, dtype=float)
    runs, points = matrix.shape
    if samples < 1:
        raise ValueError("need at least one bootstrap resample")
    rng = np.random.default_rng(seed)
    chunk = max(1, int(4e6 // max(1, runs * points)))
    has_nan = bool(np.isnan(matrix).any())
    rows = np.empty((points, samples))
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        picks = rng.integers(0, runs, size=(size, runs))
        part = rows[:, start : start + size].T  # a samples x points view
        if how == "mean" and not has_nan and points > 1:
            resampled_mean(matrix, picks, out=part)
        else:
            part[...] = aggregate(matrix[picks], how, axis=1)
    alpha = (1 - level) / 2 * 100
    return row_percentiles(rows, [alpha, 100 - alpha])


#: Points summed at once by :func:`resampled_mean` (a ``samples x 64`` total stays in cache).
_BLOCK = 64


def resampled_mean(matrix: np.ndarray, picks: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """``matrix[picks].mean(axis=1)`` bit for bit, without the ``samples x runs x points`` copy.

    For ``points > 1`` numpy sums ``matrix[picks]`` over axis 1 one run after the other into
    a ``samples x points`` total, then divides by the run count; this does the same additions
    in the same order, a block of points at a time (with one point numpy sums pairwise
    instead, so :func:`bootstrap_ci` keeps the plain form there). Without NaN, the mean
    equals nanmean.

    Args:
        matrix: ``runs x points`` (no NaN).
        picks: ``samples x runs`` row numbers of ``matrix``.
        out: where to write the ``samples x points`` result (any layout); a new array if None.
    """
    if out is None:
        out = np.empty((picks.shape[0], matrix.shape[1]))
    for start in range(0, matrix.shape[1], _BLOCK):
        block = np.ascontiguousarray(matrix[:, start : start + _BLOCK])
        total = block[picks[:, 0]]  # a fresh array (fancy indexing copies)
        for column in range(1, picks.shape[1]):
            total += block[picks[:, column]]
        total /= picks.shape[1]
        out[:, start : start + _BLOCK] = total
    return out


def _nan_percentiles(table: np.ndarray, qs: Any) -> Tuple[np.ndarray, np.ndarray]:
    """``np.nanpercentile(table, qs, axis=0)``: :func:`row_percentiles` of ``table.T``."""
    return row_percentiles(np.array(table.T, dtype=float, order="C"), qs)


def row_percentiles(rows: np.ndarray, qs: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The ``qs`` percentiles of each row of ``rows`` (``points x samples``, sorted in place):
    ``np.nanpercentile(rows.T, qs, axis=0)`` as it was computed before, the same bits.

    Rows are sorted at once (see :func:`sorted_percentiles`). Rows holding NaN go through
    ``np.nanpercentile`` and rows with zeros of both signs (equal values, different bits)
    through ``np.percentile`` of the whole table, as before.
    """
    import warnings

    zeros = rows == 0
    special = np.isnan(rows).any(axis=1)
    if zeros.any():  # checked before sorting: a SIMD sort may swap the bits of +0.0 and -0.0
        negative = np.signbit(rows)
        special |= (zeros & negative).any(axis=1) & (zeros & ~negative).any(axis=1)
    table = rows.T.copy() if special.any() else None  # the unsorted values, when needed
    rows.sort(axis=1)
    out = sorted_percentiles(rows, qs)
    if table is not None:
        with_nan = np.isnan(table).any(axis=0)
        both_zeros = special & ~with_nan
        if both_zeros.any():  # numpy's partition of the whole table decides which zero lands where
            out[:, both_zeros] = np.percentile(table, qs, axis=0)[:, both_zeros]
        if with_nan.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out[:, with_nan] = np.nanpercentile(table[:, with_nan], qs, axis=0)
    return out[0], out[1]


def sorted_percentiles(ordered: np.ndarray, qs: Any) -> np.ndarray:
    """``np.percentile(ordered.T, qs, axis=0)`` bit for bit, for rows that are sorted (and
    hold no NaN).

    numpy partitions each column along the strided axis; sorting contiguous rows (a SIMD
    sort) finds the same order statistics several times faster, and numpy's own linear
    interpolation (its ``_quantile`` and ``_lerp`` steps, operation for operation) turns them
    into the same numbers. Equal values have equal bits unless they are zeros of both signs,
    so the order statistics do not depend on the algorithm.
    """
    count = ordered.shape[1]
    virtual = (count - 1) * np.true_divide(np.asarray(qs, dtype=float), 100)
    previous = np.floor(virtual)
    following = previous + 1
    previous[virtual >= count - 1] = following[virtual >= count - 1] = -1
    previous[virtual < 0] = following[virtual < 0] = 0
    gamma = (virtual - previous.astype(np.intp)).reshape(-1, 1)
    low = ordered[:, previous.astype(np.intp)].T
    high = ordered[:, following.astype(np.intp)].T
    diff = high - low
    result = low + diff * gamma
    np.subtract(high, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    return result


def band(
    matrix: np.ndarray,
    center: np.ndarray,
    kind: str = "stderr",
    how: str = "mean",
    samples: int = 1000,
    seed: int = 0,
) -> Tuple[np.ndarray, np.ndarray]:
    """Lower and upper edges of the shaded band around ``center``.

    ``std``: center ± sample std; ``stderr``: center ± std/sqrt(n); ``ci``: bootstrap 95% CI
    of the aggregate; ``none``: the center itself.
    """
    _check("band", kind, BANDS)
    if kind == "none":
        return center, center
    if kind == "ci":
        return bootstrap_ci(matrix, how, samples=samples, seed=seed)
    spread = sample_std(matrix)
    if kind == "stderr":
        with np.errstate(invalid="ignore", divide="ignore"):
            spread = spread / np.sqrt(np.maximum(counts(matrix), 1))
    return center - spread, center + spread


def final_stats(scores: np.ndarray, samples: int = 1000, seed: int = 0) -> Dict[str, Any]:
    """Summary of per-run final scores: n, mean, median, iqm, std, stderr, 95% bootstrap CI of the mean."""
    scores = np.asarray(scores, dtype=float)
    scores = scores[np.isfinite(scores)]
    n = int(scores.size)
    if n == 0:
        return {
            "n": 0,
            "mean": np.nan,
            "median": np.nan,
            "iqm": np.nan,
            "std": np.nan,
            "stderr": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
        }
    std = float(np.std(scores, ddof=1)) if n > 1 else 0.0
    low, high = bootstrap_ci(scores.reshape(n, 1), "mean", samples=samples, seed=seed)
    return {
        "n": n,
        "mean": float(scores.mean()),
        "median": float(np.median(scores)),
        "iqm": float(iqm(scores.reshape(n, 1))[0]),
        "std": std,
        "stderr": std / np.sqrt(n),
        "ci_low": float(low[0]),
        "ci_high": float(high[0]),
    }
