"""Final-window scores: each run's mean over the last part of the x range its group shares.

One definition for ``rla plot``'s ``-final.csv`` and ``rla list --group-by``: a group's
curves are put on one grid (:func:`RLA.plot.resample.common_grid`), each run's score is the
mean of its raw (unsmoothed) grid values at ``x >= start``, where ``start`` cuts the last
``final_window`` of the grid, and :func:`RLA.plot.stats.final_stats` summarises the scores.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Sequence, Tuple

import numpy as np

from RLA.plot.resample import common_grid, stack
from RLA.plot.stats import final_stats

#: Fraction of the x range (at its end) the final statistics average over.
FINAL_WINDOW = 0.1
#: Grid points the curves are resampled to (``rla plot --resample``'s default).
POINTS = 512


def final_scores(
    raw: np.ndarray, grid: np.ndarray, final_window: float = FINAL_WINDOW
) -> Tuple[np.ndarray, float]:
    """Each run's mean over the final window of ``grid`` (NaN for a run with no value there).

    Args:
        raw: ``runs x points`` values on ``grid`` (NaN where a run has none).
        grid: the x values, ascending.
        final_window: the fraction of the x range, at its end.

    Returns:
        The scores and the window's first x.
    """
    start = grid[0] + (grid[-1] - grid[0]) * (1 - final_window)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a run without a value there scores NaN
        scores = np.nanmean(raw[:, grid >= start], axis=1)
    return scores, float(start)


def group_final_stats(
    curves: Sequence[Tuple[np.ndarray, np.ndarray]],
    points: int = POINTS,
    vary_len: bool = False,
    final_window: float = FINAL_WINDOW,
    samples: int = 1000,
    seed: int = 0,
) -> Dict[str, Any]:
    """:func:`final_stats` of one group's ``(x, y)`` curves, plus ``window_start``.

    Raises:
        RLAError: no curve has data, or the runs share no x range (see ``common_grid``).
    """
    grid = common_grid(curves, points, vary_len)
    raw, _ = stack(curves, grid)
    scores, start = final_scores(raw, grid, final_window)
    summary = final_stats(scores, samples, seed)
    summary["window_start"] = start
    return summary
