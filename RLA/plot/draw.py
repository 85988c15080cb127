"""Draw computed curves with matplotlib (Agg, never shown unless asked) and save the figure."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

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


@dataclass(frozen=True)
class Look:
    """What every curve and axes of one figure share: palette, font size, markers, legend text."""

    palette: Sequence[str]
    font: int
    pretty: bool = False
    markers: Optional[Sequence[str]] = None
    show_number: bool = True

    def label(self, curve: Dict[str, Any]) -> str:
        """A curve's legend entry (with its run count when ``show_number``), safe for mathtext."""
        return safe_label(f"{curve['legend']} ({curve['n']})" if self.show_number else curve["legend"])


def new_figure(size: Tuple[float, float], show: bool) -> Any:
    """A Figure: pyplot's only when it will be shown, else a bare one (no global pyplot state)."""
    if show:
        import matplotlib.pyplot as plt

        return plt.figure(figsize=size)
    from matplotlib.figure import Figure

    return Figure(figsize=size)  # no pyplot state: safe in scripts, threads and servers


def draw_curve(ax: Any, curve: Dict[str, Any], place: int, look: Look) -> Tuple[Any, str]:
    """Draw one curve (its center line and shaded band); return the line and its label."""
    index = curve.get("color_index", place)
    color = look.palette[index % len(look.palette)]
    label = look.label(curve)
    marker = look.markers[index % len(look.markers)] if look.markers else None
    (line,) = ax.plot(
        curve["x"],
        curve["center"],
        color=color,
        lw=2.2 if look.pretty else 1.6,
        label=label,
        marker=marker,
        markevery=max(1, len(curve["x"]) // 10) if marker else None,
    )
    ax.fill_between(curve["x"], curve["low"], curve["high"], color=color, alpha=0.2, lw=0)
    return line, label


def dress_axes(
    ax: Any,
    title: str,
    xlabel: str,
    ylabel: str,
    look: Look,
    xlim: Optional[Tuple[float, float]] = None,
    ylim: Optional[Tuple[float, float]] = None,
    log: bool = False,
) -> None:
    """Title, labels, grid, ticks, limits and scale of one subplot."""
    ax.set_title(title, fontsize=look.font)
    ax.set_xlabel(xlabel, fontsize=look.font)
    ax.set_ylabel(ylabel, fontsize=look.font)
    ax.grid(True, alpha=0.3)
    ax.tick_params(labelsize=look.font - 2)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if log:
        ax.set_yscale("log")
    if look.pretty:
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)


def draw_bound_lines(
    ax: Any, bound_line: Optional[Sequence[Tuple[float, str, str, str]]]
) -> List[Tuple[Any, str]]:
    """The original's ``bound_line``: ``(y, color, linestyle, label)`` horizontal lines; returns
    each line with its label (for the legend)."""
    drawn = []
    for y, color, linestyle, label in bound_line or []:
        drawn.append((ax.axhline(y, color=color, linestyle=linestyle, label=label), label))
    return drawn


def add_legend(fig: Any, entries: Dict[str, Any], panels: int, style: Dict[str, Any], font: int) -> None:
    """One legend for the figure: in the only axes (``loc='best'``, or outside on the right with
    ``legend_outside``), or below every subplot; none with ``skip_legend``."""
    handles, labels = list(entries.values()), list(entries)
    ncol = style.get("legend_ncol") or (1 if panels == 1 else min(4, max(1, len(labels))))
    if style.get("skip_legend"):
        return
    if panels == 1 and style.get("legend_outside"):
        fig.axes[0].legend(
            handles, labels, fontsize=font - 1, loc="upper left", bbox_to_anchor=(1, 1), ncol=ncol
        )
    elif panels == 1:
        fig.axes[0].legend(handles, labels, fontsize=font - 1, loc="best", ncol=ncol)
    else:
        fig.legend(
            handles, labels, loc="lower center", ncol=ncol, fontsize=font - 1, bbox_to_anchor=(0.5, 0.0)
        )


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
    ``legend_ncol`` and ``skip_legend``. ``bound_line`` lines are drawn in every subplot and
    named in the legend."""
    style = style or {}
    palette = list(colors) if colors else (PRETTY_COLORS if pretty else COLORS)
    look = Look(palette, 16 if pretty else 10, pretty, style.get("markers"), show_number)
    rows, cols = tile(len(panels), tiling)
    fig = new_figure(figsize or ((7 * cols, 5.5 * rows) if pretty else (6.4 * cols, 4.8 * rows)), show)
    entries: Dict[str, Any] = {}  # label -> the first line drawn with it
    bounds: Dict[str, Any] = {}  # the bound lines come last in the legend, as in the original
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        for j, curve in enumerate(panel["curves"]):
            line, label = draw_curve(ax, curve, j, look)
            entries.setdefault(label, line)
        for line, label in draw_bound_lines(ax, bound_line):
            bounds.setdefault(label, line)
        ylabel = ylabels[i] if i < len(ylabels) else ""
        dress_axes(ax, panel["title"], xlabel, ylabel, look, xlim, ylim, log)
    entries.update((label, line) for label, line in bounds.items() if label not in entries)
    add_legend(fig, entries, len(panels), style, look.font)
    if title:
        fig.suptitle(title, fontsize=look.font + 2)
    fig.tight_layout(rect=(0, 0.06 * math.ceil(len(entries) / 4) if len(panels) > 1 else 0, 1, 1))
    return fig
