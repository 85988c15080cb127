"""Matplotlib figures saved into a run's results folder (``<time-step>-<name>.png``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from RLA.errors import RecorderError
from RLA.recorders.base import PathLike, publish, result_path


def _figure_to_save(fig: Any) -> Any:
    """``fig`` as given, or the current figure; never a blank one made up by ``plt.gcf()``.

    Raises:
        RecorderError: without ``fig``, no figure is open (``pretty_plot_wrapper`` closes its
            figure after saving it) or the current figure has nothing drawn on it. A figure
            passed explicitly is saved as it is.
    """
    import matplotlib.pyplot as plt

    if fig is not None:
        return fig
    if not plt.get_fignums():
        raise RecorderError(
            "No figure to save: no matplotlib figure is open",
            expected="a figure drawn before save(), or save(name, fig=...)",
            found="no open figure (pretty_plot_wrapper saves and closes its own figure)",
            fix="draw first (plt.plot(...)) and then call save, or pass fig=",
        )
    fig = plt.gcf()
    drawn = (
        fig.axes,
        fig.texts,
        fig.images,
        fig.lines,
        fig.patches,
        fig.artists,
        fig.legends,
        getattr(fig, "subfigs", []),
    )
    if not any(drawn):
        raise RecorderError(
            "The current figure is empty",
            expected="a figure with axes or artists",
            found=f"{fig!r} with nothing drawn",
            fix="plot into it before saving it, or pass fig=",
        )
    return fig


def save_figure(
    results_dir: Optional[PathLike],
    name: str,
    fig: Any = None,
    step: Optional[int] = None,
    cover: bool = False,
    add_timestamp: bool = True,
    close: bool = False,
    **savefig_kw: Any,
) -> Optional[Path]:
    """Save ``fig`` (default: the current figure) as ``<results_dir>/<step>-<name>``.

    The format comes from the name's extension (``.png`` when there is none).

    Returns:
        The file, or ``None`` when it exists and ``cover`` is False (never overwritten).

    Raises:
        RecorderError: without ``fig``, no figure is open or the current one is empty (a blank
            file is never made up).
    """
    import matplotlib.pyplot as plt

    path = result_path(results_dir, name, step, add_timestamp, default_ext=".png")
    figure = _figure_to_save(fig)
    savefig_kw.setdefault("format", path.suffix.lstrip(".") or "png")
    with publish(path, cover) as tmp:
        if tmp is None:
            return None
        figure.savefig(tmp, **savefig_kw)
    if close:
        plt.close(figure)
    return path


def pretty_plot(
    results_dir: Optional[PathLike],
    name: str,
    plot_func: Callable[..., Any],
    step: Optional[int] = None,
    cover: bool = False,
    legend_outside: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    add_timestamp: bool = True,
    close: bool = True,
    *args: Any,
    pretty: bool = False,
    savefig_kw: Optional[Mapping[str, Any]] = None,
    **kwargs: Any,
) -> Optional[Path]:
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
        return save_figure(
            results_dir, name, fig, step=step, cover=cover, add_timestamp=add_timestamp, **options
        )
    finally:
        if close:
            plt.close(fig)
