"""Matplotlib figures saved into a run's results folder (``<time-step>-<name>.png``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional

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
                *args: Any, pretty: bool = False, savefig_kw: Optional[Mapping[str, Any]] = None,
                **kwargs: Any) -> Optional[Path]:
    """Draw with ``plot_func(*args, **kwargs)`` on a fresh figure, add labels/legend/grid, and save it.

    ``pretty`` uses larger fonts (labels 18, ticks 14, title 13); ``savefig_kw`` goes to
    ``savefig`` (``bbox_inches='tight'`` unless given).
    """
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
    sizes = {"label": 18, "ticks": 14, "title": 13} if pretty else {}
    ax.set_xlabel(xlabel, fontsize=sizes.get("label"))
    ax.set_ylabel(ylabel, fontsize=sizes.get("label"))
    ax.set_title(title, fontsize=sizes.get("title"))
    if pretty:
        ax.tick_params(labelsize=sizes["ticks"])
    ax.grid(True)
    options = {"bbox_inches": "tight", **dict(savefig_kw or {})}
    try:
        return save_figure(results_dir, name, fig, step=step, cover=cover, add_timestamp=add_timestamp, **options)
    finally:
        if close:
            plt.close(fig)
