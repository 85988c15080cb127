"""Aggregate stage of a plot: one group's resampled runs become a curve with a band and final stats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

import numpy as np

from RLA.plot.final import final_scores
from RLA.plot.options import StatOptions
from RLA.plot.resample import Resampled
from RLA.plot.stats import aggregate, band, counts, final_stats


@dataclass
class GroupCurve:
    """One drawn curve: its legend, run count, x, center, band edges and runs per point."""

    legend: str
    n: int
    x: np.ndarray
    center: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_at_x: np.ndarray
    color_index: int = 0

    def for_draw(self) -> Dict[str, Any]:
        """The curve as :func:`RLA.plot.draw.draw` takes it."""
        keys = ("legend", "n", "x", "center", "low", "high", "color_index")
        return {key: getattr(self, key) for key in keys}


@dataclass
class GroupSummary:
    """A group's curve and its final-window statistics (``final['window_start']`` included)."""

    curve: GroupCurve
    final: Dict[str, Any]


def rescale(grid: np.ndarray, rescale_idx: Optional[float]) -> np.ndarray:
    """``grid`` relabelled to ``[0, rescale_idx]`` (the original's ``rescale_idx``); unchanged if None."""
    if rescale_idx is None or not grid[-1] > grid[0]:
        return grid
    return (grid - grid[0]) / (grid[-1] - grid[0]) * float(rescale_idx)


def summarize_group(legend: str, color_index: int, sampled: Resampled, opts: StatOptions) -> GroupSummary:
    """The center (``opts.agg``) and band (``opts.band_kind``) of the smoothed runs at each x, and
    the statistics of each run's mean over the final window of the raw runs.

    Args:
        legend: the group's legend.
        color_index: the curve's place in its panel (picks its color and marker).
        sampled: the group's runs on its grid (see :func:`RLA.plot.resample.resample_group`).
        opts: the statistics to use.
    """
    grid = rescale(sampled.grid, opts.rescale_idx)
    smooth = sampled.smooth
    center = aggregate(smooth, opts.agg)
    low, high = band(smooth, center, opts.band_kind, opts.agg, opts.bootstrap_samples, opts.seed)
    curve = GroupCurve(legend, len(smooth), grid, center, low, high, counts(smooth), color_index)
    scores, start = final_scores(sampled.raw, grid, opts.final_window)
    final = final_stats(scores, opts.bootstrap_samples, opts.seed)
    final["window_start"] = float(start)
    return GroupSummary(curve, final)
