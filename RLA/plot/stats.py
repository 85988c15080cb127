"""Statistics over seeds: center (mean, median, IQM), bands (std, stderr, bootstrap CI), final window.

Every function takes a ``runs x points`` matrix with NaN where a run has no value (runs
of unequal length), and ignores the NaNs point by point.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

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
    """
    matrix = np.asarray(matrix, dtype=float)
    runs, points = matrix.shape
    rng = np.random.default_rng(seed)
    chunk = max(1, int(4e6 // max(1, runs * points)))
    has_nan = bool(np.isnan(matrix).any())
    stats = []
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        picks = rng.integers(0, runs, size=(size, runs))
        if how == "mean" and not has_nan and points > 1:
            stats.append(resampled_mean(matrix, picks))
        else:
            stats.append(aggregate(matrix[picks], how, axis=1))
    table = np.concatenate(stats, axis=0)
    alpha = (1 - level) / 2 * 100
    return _nan_percentiles(table, [alpha, 100 - alpha])


#: Points summed at once by :func:`resampled_mean` (a ``samples x 256`` total stays in cache).
_BLOCK = 256


def resampled_mean(matrix: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """``matrix[picks].mean(axis=1)`` bit for bit, without the ``samples x runs x points`` copy.

    For ``points > 1`` numpy sums ``matrix[picks]`` over axis 1 one run after the other into
    a ``samples x points`` total, then divides by the run count; this does the same additions
    in the same order, a block of points at a time (with one point numpy sums pairwise
    instead, so :func:`bootstrap_ci` keeps the plain form there). Without NaN, the mean
    equals nanmean.

    Args:
        matrix: ``runs x points`` (no NaN).
        picks: ``samples x runs`` row numbers of ``matrix``.
    """
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
    """``np.nanpercentile(table, qs, axis=0)``, the same numbers: columns without NaN go
    through ``np.percentile`` at once (nanpercentile handles every column in a Python loop)."""
    import warnings

    with_nan = np.isnan(table).any(axis=0)
    out = (
        np.percentile(table, qs, axis=0) if not with_nan.all() else np.full((len(qs), table.shape[1]), np.nan)
    )
    if with_nan.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[:, with_nan] = np.nanpercentile(table[:, with_nan], qs, axis=0)
    return out[0], out[1]


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
