"""Original import path of ``plot_func`` (``from RLA.easy_plot.plot_func_v2 import plot_func``).

This face returns the original's pair ``(g2lf, score_results)``; ``RLA.plot_func`` returns
RLA's :class:`RLA.plot.PlotResult` (which carries the same two as attributes). The figure
is never shown unless ``show=True`` (the original always called ``plt.show()``).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from RLA.plot import default_key_to_legend
from RLA.plot import plot_func as _plot_func


def plot_func(
    data_root: str,
    task_table_name: str,
    regs: list,
    split_keys: list,
    metrics: list,
    *args: Any,
    verbose: bool = False,
    **kwargs: Any,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Plot as :func:`RLA.plot.plot_func`; returns ``(g2lf, score_results)`` like the original.

    ``*args`` keep the original's positional order (``use_buf``, ``verbose``, ``xlim`` ...);
    one given positionally wins over the keyword default here.
    """
    if len(args) < 2:  # verbose is the original's 7th positional parameter
        kwargs["verbose"] = verbose
    result = _plot_func(data_root, task_table_name, regs, split_keys, metrics, *args, **kwargs)
    return result.g2lf, result.score_results


__all__ = ["default_key_to_legend", "plot_func"]
