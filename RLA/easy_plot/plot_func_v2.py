"""The original's ``RLA.easy_plot.plot_func_v2`` module path, a face over :mod:`RLA.plot`."""
from __future__ import annotations

from RLA.plot import default_key_to_legend, plot_func

__all__ = ["default_key_to_legend", "plot_func"]
