"""Grouped learning-curve plots of selected runs (``plot_func``) and their statistics.

``RLA.plot_func`` resolves here lazily; matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from RLA.plot.grouping import default_key_to_legend
from RLA.plot.plot_func import PlotResult, plot_func
from RLA.plot.stats import aggregate, band, bootstrap_ci, final_stats, iqm

__all__ = [
    "PlotResult",
    "aggregate",
    "band",
    "bootstrap_ci",
    "default_key_to_legend",
    "final_stats",
    "iqm",
    "plot_func",
]
