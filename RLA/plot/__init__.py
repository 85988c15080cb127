"""Grouped learning-curve plots of selected runs (``plot_func``) and their statistics.

The stages, one module each: ``select`` → ``load`` → ``resample`` (and smooth) →
``aggregate`` (with ``stats`` and ``final``) → ``draw`` → ``save``; ``pipeline`` chains
them and ``plot_func`` is the original's signature over it.

``RLA.plot_func`` resolves here lazily; matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from RLA.plot.grouping import default_key_to_legend
from RLA.plot.plot_func import plot_func
from RLA.plot.result import PlotResult
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
