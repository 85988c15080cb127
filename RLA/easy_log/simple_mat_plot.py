"""The original's quick figures (``simple_plot``, ``simple_hist``, ``simple_scatter``) saved into
the current run's results folder as ``<name>.png`` (``<name>.pdf`` with ``pretty=True``).

They draw through :func:`RLA.recorders.pretty_plot`: a fresh figure each call, closed after
saving, written atomically, never overwriting an existing file unless ``cover=True``.
Fixed: importing the module no longer forces matplotlib's ``Agg`` backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from RLA.errors import RLAError
from RLA.recorders import pretty_plot


def _target(name: str, pretty: bool, save_path: str | None) -> tuple[str | None, str]:
    """``(folder, file name)`` to save into: ``save_path`` or ``<results_dir>/<name>.png|pdf``."""
    if save_path is not None:
        return os.path.dirname(os.path.abspath(save_path)), os.path.basename(save_path)
    from RLA.easy_log.tester import exp_manager

    return exp_manager.results_dir, name + (".pdf" if pretty else ".png")


def _save(
    name: str,
    draw: Callable[[], None],
    pretty: bool,
    save_path: str | None,
    cover: bool,
    xlabel: str,
    ylabel: str,
    title: str | None,
    legend_outside: bool = False,
) -> Path | None:
    folder, file_name = _target(name, pretty, save_path)
    return pretty_plot(
        folder,
        file_name,
        draw,
        None,
        cover,
        legend_outside,
        xlabel,
        ylabel,
        title or "",
        False,
        True,
        pretty=pretty,
    )


def _series(data: Any, x: Any, y: Any) -> list:
    """``[(x or None, y), ...]`` from ``data`` (one y per curve) or ``x``/``y`` (paired lists)."""
    if data is not None:
        return [(None, d) for d in data]
    if x is not None and y is not None:
        return list(zip(x, y))
    raise RLAError(
        "simple_plot needs curves",
        expected="data=[y1, y2, ...] or x=[x1, ...] and y=[y1, ...]",
        found="data=None and x/y not both given",
        fix="pass data= or x= and y=",
    )


def simple_plot(
    name: str,
    data: Any = None,
    x: Any = None,
    y: Any = None,
    labels: Sequence[str] | None = None,
    pretty: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    colors: Sequence[Any] | None = None,
    styles: Sequence[str] | None = None,
    cover: bool = False,
    title: str | None = None,
    legend_outside: bool = False,
    save_path: str | None = None,
    *args: Any,
    **kwargs: Any,
) -> Path | None:
    """Line plot of each curve; ``labels``/``colors``/``styles`` per curve; extra args go to ``plt.plot``."""
    import matplotlib.pyplot as plt

    curves = _series(data, x, y)

    def draw() -> None:
        for i, (xs, ys) in enumerate(curves):
            style = [styles[i]] if styles is not None else []
            options = dict(kwargs)
            if labels is not None:
                options["label"] = labels[i]
            if colors is not None:
                options["color"] = colors[i]
            points = [ys] if xs is None else [xs, ys]
            plt.plot(*points, *style, *args, **options)

    return _save(name, draw, pretty, save_path, cover, xlabel, ylabel, title, legend_outside)


def simple_hist(
    name: str,
    data: Any,
    labels: Sequence[str] | None = None,
    pretty: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    title: str | None = None,
    colors: Sequence[Any] | None = None,
    styles: Sequence[str] | None = None,
    cover: bool = False,
    save_path: str | None = None,
    *args: Any,
    **kwargs: Any,
) -> Path | None:
    """Histogram of ``data`` (one array, or one per label); extra args go to ``plt.hist``."""
    import matplotlib.pyplot as plt

    del styles  # accepted as in the original, which ignored it too

    def draw() -> None:
        options = dict(kwargs)
        if colors is not None:
            options.setdefault("color", list(colors))
        options["label"] = list(labels) if labels is not None else None
        plt.hist(data, *args, **options)

    return _save(name, draw, pretty, save_path, cover, xlabel, ylabel, title)


def simple_scatter(
    name: str,
    datas: Sequence[Any],
    texts: Sequence[Any],
    pretty: bool = False,
    xlabel: str = "",
    ylabel: str = "",
    cover: bool = False,
    save_path: str | None = None,
    *args: Any,
    **kwargs: Any,
) -> Path | None:
    """Scatter of each ``(N, 2)`` array in ``datas``, annotated with its text at its mean."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt
    import numpy as np

    palette = list(mcolors.TABLEAU_COLORS)

    def draw() -> None:
        for i, (points, text) in enumerate(zip(datas, texts)):
            points = np.asarray(points)
            color = palette[i % len(palette)]
            options = {"color": color, "marker": "x", "alpha": 0.2, **kwargs}
            plt.scatter(points[:, 0], points[:, 1], *args, **options)
            plt.annotate(str(text), xy=tuple(points.mean(axis=0)), color=color)

    return _save(name, draw, pretty, save_path, cover, xlabel, ylabel, None)


__all__ = ["simple_hist", "simple_plot", "simple_scatter"]
