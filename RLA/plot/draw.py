"""Draw computed curves with matplotlib (Agg, never shown unless asked) and save the figure."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

COLORS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
]
PRETTY_COLORS = [
    "orangered",
    "royalblue",
    "forestgreen",
    "orange",
    "deeppink",
    "deepskyblue",
    "purple",
    "saddlebrown",
    "gray",
    "olive",
]


def safe_label(text: str) -> str:
    """``text`` as matplotlib can draw it: a legend built from a run's values may hold ``$``
    pairs that are not valid mathtext (``$\\frac{$``), which would fail the whole figure at
    save time. Valid mathtext (``$\\alpha$=0.1``) is kept; otherwise the ``$`` are escaped."""
    if text.replace("\\$", "").count("$") < 2:
        return text
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(text)
    except Exception:  # noqa: BLE001 - pyparsing and ValueError variants: fall back to plain text
        return text.replace("\\$", "$").replace("$", "\\$")
    return text


def tile(n: int, tiling: str = "symmetric") -> Tuple[int, int]:
    """Rows and columns for ``n`` subplots."""
    if tiling == "vertical":
        return n, 1
    if tiling == "horizontal":
        return 1, n
    rows = max(1, int(math.sqrt(n)))
    return rows, math.ceil(n / rows)


def draw(
    panels: Sequence[Dict[str, Any]],
    xlabel: str,
    ylabels: Sequence[str],
    title: Optional[str] = None,
    pretty: bool = False,
    colors: Optional[Sequence[str]] = None,
    tiling: str = "symmetric",
    figsize: Optional[Tuple[float, float]] = None,
    xlim: Optional[Tuple[float, float]] = None,
    ylim: Optional[Tuple[float, float]] = None,
    log: bool = False,
    show_number: bool = True,
    bound_line: Optional[Sequence[Tuple[float, str, str, str]]] = None,
    show: bool = False,
    style: Optional[Dict[str, Any]] = None,
) -> Any:
    """Draw one subplot per panel; each panel is ``{"title": str, "curves": [curve, ...]}`` where a
    curve is ``{"legend", "n", "x", "center", "low", "high"}``. Returns the Figure.

    ``style``: the original's ``markers`` (a list, one per curve), ``legend_outside``,
    ``legend_ncol`` and ``skip_legend``."""
    style = style or {}
    markers = style.get("markers")
    palette = list(colors) if colors else (PRETTY_COLORS if pretty else COLORS)
    rows, cols = tile(len(panels), tiling)
    size = figsize or ((7 * cols, 5.5 * rows) if pretty else (6.4 * cols, 4.8 * rows))
    if show:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=size)
    else:
        from matplotlib.figure import Figure

        fig = Figure(figsize=size)  # no pyplot state: safe in scripts, threads and servers
    font = 16 if pretty else 10
    legend_order: Dict[str, Tuple[Any, str]] = {}
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        for j, curve in enumerate(panel["curves"]):
            color = palette[curve.get("color_index", j) % len(palette)]
            label = safe_label(f"{curve['legend']} ({curve['n']})" if show_number else curve["legend"])
            marker = markers[curve.get("color_index", j) % len(markers)] if markers else None
            (line,) = ax.plot(
                curve["x"],
                curve["center"],
                color=color,
                lw=2.2 if pretty else 1.6,
                label=label,
                marker=marker,
                markevery=max(1, len(curve["x"]) // 10) if marker else None,
            )
            ax.fill_between(curve["x"], curve["low"], curve["high"], color=color, alpha=0.2, lw=0)
            legend_order.setdefault(label, (line, label))
        for y, color, style, label in bound_line or []:
            ax.axhline(y, color=color, linestyle=style, label=label)
        ax.set_title(panel["title"], fontsize=font)
        ax.set_xlabel(xlabel, fontsize=font)
        ax.set_ylabel(ylabels[i] if i < len(ylabels) else "", fontsize=font)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=font - 2)
        if xlim is not None:
            ax.set_xlim(*xlim)
        if ylim is not None:
            ax.set_ylim(*ylim)
        if log:
            ax.set_yscale("log")
        if pretty:
            ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)
    handles = [item[0] for item in legend_order.values()]
    labels = [item[1] for item in legend_order.values()]
    ncol = style.get("legend_ncol") or (1 if len(panels) == 1 else min(4, max(1, len(labels))))
    if style.get("skip_legend"):
        pass
    elif len(panels) == 1 and style.get("legend_outside"):
        fig.axes[0].legend(
            handles, labels, fontsize=font - 1, loc="upper left", bbox_to_anchor=(1, 1), ncol=ncol
        )
    elif len(panels) == 1:
        fig.axes[0].legend(handles, labels, fontsize=font - 1, loc="best", ncol=ncol)
    else:
        fig.legend(
            handles, labels, loc="lower center", ncol=ncol, fontsize=font - 1, bbox_to_anchor=(0.5, 0.0)
        )
    if title:
        fig.suptitle(title, fontsize=font + 2)
    fig.tight_layout(rect=(0, 0.06 * math.ceil(len(labels) / 4) if len(panels) > 1 else 0, 1, 1))
    return fig
