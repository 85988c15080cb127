"""Matplotlib figures saved into a run's results folder (``<time-step>-<name>.png``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from RLA.recorders.base import PathLike, publish, result_path


def save_figure(results_dir: Optional[PathLike], name: str, fig: Any = None, step: Optional[int] = None,
                cover: bool = False, add_timestamp: bool = True, close: bool = False, **savefig_kw: Any
                ) -> Optional[Path]:
    """Save ``fig`` (default: the current figure) as ``<results_dir>/<step>-<name>``.

    The format comes from the name's extension (``.png`` when there is none).

    Returns:
        The file, or ``None`` when it exists and ``cover`` is False (never overwritten).
    """
    import matplotlib.pyplot as plt

    path = result_path(results_dir, name, step, add_timestamp, default_ext=".png")
    figure = fig if fig is not None else plt.gcf()
    savefig_kw.setdefault("format", path.suffix.lstrip(".") or "png")
    with publish(path, cover) as tmp:
        if tmp is None:
            return None
        figure.savefig(tmp, **savefig_kw)
    if close:
        plt.close(figure)
    return path


def pretty_plot(results_dir: Optional[PathLike], name: str, plot_func: Callable[..., Any],
                step: Optional[int] = None, cover: bool = False, legend_outside: bool = False, xlabel: str = "",
                ylabel: str = "", title: str = "", add_timestamp: bool = True, close: bool = True,
                *args: Any, **kwargs: Any) -> Optional[Path]:
    """Draw with ``plot_func(*args, **kwargs)`` on a fresh figure, add labels/legend/grid, and save it."""
    import matplotlib
    import matplotlib.pyplot as plt

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo") and not plt.get_fignums():
        plt.switch_backend("agg")  # headless training machines have no display
    fig = plt.figure()
    plot_func(*args, **kwargs)
    ax = plt.gca()
    if ax.get_legend_handles_labels()[0]:
        if legend_outside:
            ax.legend(prop={"size": 15}, loc="upper left", bbox_to_anchor=(1, 1))
        else:
            ax.legend(prop={"size": 15})
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True)
    try:
        return save_figure(results_dir, name, fig, step=step, cover=cover, add_timestamp=add_timestamp,
                           bbox_inches="tight")
    finally:
        if close:
            plt.close(fig)
