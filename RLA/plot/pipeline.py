"""A plot from start to end: select → load → resample and smooth → aggregate → draw → save.

Each stage is its own module and is usable alone (the dashboard and ``rla list --group-by``
reuse the grouping, resampling and statistics); this module only passes one stage's
output to the next and collects the numbers, notes and CSV lines on the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from RLA.plot.aggregate import GroupCurve, summarize_group
from RLA.plot.grouping import Group, default_key_to_legend, group_runs
from RLA.plot.load import XY, Loaded, load
from RLA.plot.options import FigureOptions, SaveOptions, StatOptions, ValueFilterFn, XBound
from RLA.plot.original_shape import original_scores
from RLA.plot.resample import resample_group
from RLA.plot.result import PlotResult
from RLA.plot.save import curve_rows, default_stem, final_row, save_plot
from RLA.plot.select import RunQuery, Selected, select
from RLA.text import count, plural


@dataclass(frozen=True)
class PlotRequest:
    """Everything a plot needs, grouped by stage (built by :func:`RLA.plot.plot_func`)."""

    query: RunQuery
    metrics: Sequence[str]
    x_key: str = "time-step"
    x_bound: XBound = None
    value_filter: Optional[ValueFilterFn] = None
    scale_dict: Optional[Dict[str, Callable[..., Any]]] = None
    key_to_legend_fn: Callable[..., str] = default_key_to_legend
    split_by_metrics: bool = True
    stats: StatOptions = field(default_factory=StatOptions)
    figure: FigureOptions = field(default_factory=FigureOptions)
    output: SaveOptions = field(default_factory=SaveOptions)
    verbose: bool = False


@dataclass
class Collected:
    """What the metric loop gathers: panels to draw, CSV lines, statistics and notes."""

    notes: List[str]
    panels: List[Dict[str, Any]] = field(default_factory=list)
    curve_lines: List[str] = field(default_factory=list)
    final_lines: List[str] = field(default_factory=list)
    stats: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    legends: Dict[str, int] = field(default_factory=dict)
    original: Dict[str, Dict[str, Any]] = field(default_factory=lambda: {"g2lf": {}, "score_results": {}})


def plot_group(
    metric: str, group: Group, index: int, data: List[XY], opts: StatOptions, out: Collected
) -> GroupCurve:
    """Resample, smooth and aggregate one group's runs; record its numbers in ``out``."""
    sampled = resample_group(data, opts.points, opts.smooth_step, opts.vary_len)
    if sampled.cut_at is not None:
        out.notes.append(
            f"{metric}: {group.legend!r}: {count(len(data), 'run')} cut to x <= {sampled.cut_at:g} "
            f"(the shortest run); pass vary_len_plot=True (rla plot --vary-len) to keep "
            "the tails"
        )
    original_scores(out.original, metric, group.legend, sampled.smooth)
    summary = summarize_group(group.legend, index, sampled, opts)
    final = summary.final
    left = len(data) - final["n"]
    if left > 0:
        out.notes.append(
            f"{metric}: {group.legend!r}: {count(left, 'run')} {plural(left, 'ends', 'end')} before "
            f"the final window (x >= {final['window_start']:g}) and {plural(left, 'is', 'are')} "
            "left out of its statistics"
        )
    out.legends[group.legend] = len(data)
    out.stats.setdefault(metric, {})[group.legend] = final
    out.curve_lines.extend(curve_rows(metric, summary.curve))
    out.final_lines.append(final_row(metric, group.legend, final))
    return summary.curve


def plot_metrics(request: PlotRequest, selected: Selected, loaded: Loaded, out: Collected) -> None:
    """One panel per metric, one curve per group of runs with data."""
    use_y_name = not request.split_by_metrics and len(request.metrics) > 1
    for metric in request.metrics:
        per_run = loaded.curves[metric]
        groups = group_runs(
            selected.runs_per_reg,
            selected.split_keys,
            metric,
            request.query.regs2legends,
            request.key_to_legend_fn,
            use_y_name,
        )
        curves = []
        for index, group in enumerate(groups):
            data = [per_run[row.index] for row in group.runs if row.index in per_run]
            if not data:
                out.notes.append(f"{metric}: group {group.legend!r} has no data")
                continue
            curves.append(plot_group(metric, group, index, data, request.stats, out).for_draw())
        out.panels.append({"title": metric, "curves": curves})
    if not request.split_by_metrics and len(out.panels) > 1:
        merged = [dict(c, color_index=i) for i, c in enumerate(c for p in out.panels for c in p["curves"])]
        out.panels[:] = [{"title": ", ".join(request.metrics), "curves": merged}]


def draw_panels(panels: List[Dict[str, Any]], look: FigureOptions) -> Any:
    """Draw stage: the figure of ``panels`` (see :func:`RLA.plot.draw.draw`)."""
    from RLA.plot.draw import draw

    ylabels = look.ylabels([p["title"] for p in panels])
    return draw(
        panels,
        look.xlabel,
        ylabels,
        look.title,
        look.pretty,
        look.colors,
        look.tiling,
        look.figsize,
        look.xrange(),
        look.ylim,
        look.log,
        look.show_number,
        look.bound_line,
        look.show,
        style=look.style,
    )


def run_plot(request: PlotRequest) -> PlotResult:
    """Run every stage of ``request``; see :func:`RLA.plot.plot_func` for what it writes and returns."""
    # stacklevel 3: a damaged run is reported at the line that called plot_func.
    selected = select(request.query, stacklevel=3)
    loaded = load(
        selected.rows,
        request.metrics,
        request.x_key,
        request.x_bound,
        request.value_filter,
        request.scale_dict,
    )
    skipped = selected.skipped + loaded.skipped
    out = Collected([f"skipped unreadable run {i}: {p}" for i, p in skipped] + selected.key_notes)
    plot_metrics(request, selected, loaded, out)
    fig = draw_panels(out.panels, request.figure)
    data_root = Path(request.query.data_root)
    default = default_stem(request.query.task, request.metrics)
    files = save_plot(fig, data_root, request.output, default, out.curve_lines, out.final_lines)
    if request.verbose:
        from RLA.plot.report import report

        report(out.notes, out.stats, request.stats.agg, files)
    if request.figure.show:
        import matplotlib.pyplot as plt

        plt.show()
    result = PlotResult(out.legends, out.stats, files, fig, out.notes, skipped)
    result.g2lf, result.score_results = out.original["g2lf"], out.original["score_results"]
    return result
