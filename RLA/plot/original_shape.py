"""The original plot_func's return shapes, ``g2lf`` and ``score_results``, from RLA's curves."""

from __future__ import annotations

import warnings
from typing import Any, Dict

import numpy as np


def original_scores(into: Dict[str, Dict[str, Any]], metric: str, legend: str, smooth: np.ndarray) -> None:
    """Add one group's curves (runs x grid, NaN where a run has no value) to ``into``.

    ``g2lf[metric][legend+'-se'|'-ss'|'-sr'] = [None, center, spread]`` per x (the original
    kept the matplotlib artist first); ``score_results[legend+'-err'|'-std'|'-range']`` holds
    the values at the last x: ``[mean, stderr]``, ``[mean, std]`` and ``[min, max]``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(smooth, axis=0)
        std = np.nanstd(smooth, axis=0)
        n = np.maximum(np.sum(~np.isnan(smooth), axis=0), 1)
        low, high = np.nanmin(smooth, axis=0), np.nanmax(smooth, axis=0)
    stderr = std / np.sqrt(n)
    g2lf = into.setdefault("g2lf", {}).setdefault(metric, {})
    g2lf[legend + "-se"] = [None, mean, stderr]
    g2lf[legend + "-ss"] = [None, mean, std]
    g2lf[legend + "-sr"] = [None, low, high]
    scores = into.setdefault("score_results", {})
    scores[legend + "-err"] = [float(mean[-1]), float(stderr[-1])]
    scores[legend + "-std"] = [float(mean[-1]), float(std[-1])]
    scores[legend + "-range"] = [float(low[-1]), float(high[-1])]


__all__ = ["original_scores"]
