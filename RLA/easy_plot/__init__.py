"""The original project's plotting import path (``RLA.easy_plot``), a face over :mod:`RLA.plot`."""

from __future__ import annotations

from RLA.plot import default_key_to_legend, plot_func

__all__ = ["default_key_to_legend", "plot_func"]
