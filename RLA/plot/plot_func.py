"""``plot_func``: grouped learning curves over seeds, saved as a figure plus CSVs of the numbers.

The signature of the original project's ``RLA.plot_func`` is kept; the statistics are new:
mean/median/IQM over seeds, std/stderr/bootstrap-CI bands, an explicit policy for runs of
unequal length, and final-window statistics returned and written to ``<stem>-final.csv``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from RLA.errors import RLAError, RunNotFoundError
from RLA.fs import atomic_write_text, plain
from RLA.plot.checks import check_split_keys, check_tasks, with_task_key
from RLA.plot.final import final_scores
from RLA.plot.grouping import default_key_to_legend, group_runs
from RLA.plot.original_shape import original_scores
from RLA.plot.resample import check_points, common_grid, split_xy, stack
from RLA.plot.stats import AGGREGATES, BANDS, aggregate, band, counts, final_stats

FORMATS = ("png", "pdf", "svg")


class PlotResult(tuple):
    """``(legends, stats)`` like the original's ``(g2lf, score_results)``, plus attributes.

    Attributes:
        legends: ``{legend: number of runs}``.
        stats: ``{metric: {legend: {n, mean, median, iqm, std, stderr, ci_low, ci_high}}}``
            over the final window.
        files: paths written (figures, ``.csv``, ``-final.csv``).
        figure: the matplotlib Figure.
        notes: messages about truncated runs or skipped metrics.
        skipped: ``(index, reason)`` of every damaged run left out (each also a
            :class:`RLA.query.BrokenRunWarning`).
    """

    def __new__(
        cls,
        legends: Dict[str, int],
        stats: Dict[str, Any],
        files: List[Path],
        figure: Any,
        notes: List[str],
        skipped: Optional[List[Tuple[str, str]]] = None,
    ) -> "PlotResult":
        obj = super().__new__(cls, (legends, stats))
        obj.legends, obj.stats, obj.files, obj.figure, obj.notes = legends, stats, files, figure, notes
        obj.skipped = list(skipped or [])
        return obj


def _band_from_legacy(kwargs: Dict[str, Any], default: str) -> str:
    """Map the original's ``shaded_std``/``shaded_err`` flags onto ``band``."""
    if kwargs.pop("shaded_std", False):
        return "std"
    if kwargs.pop("shaded_err", False):
        return "stderr"
    return default


def _save_figure(fig: Any, stem: Path, formats: Sequence[str]) -> List[Path]:
    paths = []
    stem.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fig.savefig(tmp, dpi=150, bbox_inches="tight", format=fmt)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def _stem_and_formats(
    data_root: Path,
    save_name: Optional[str],
    save_dir: Optional[os.PathLike],
    formats: Optional[Sequence[str]],
    pretty: bool,
    default: str,
) -> Tuple[Path, List[str]]:
    name = save_name or default
    base = Path(save_dir) if save_dir is not None else data_root / "results" / "easy_plot"
    stem = Path(name) if Path(name).is_absolute() else base / name
    suffix = stem.suffix.lstrip(".").lower()
    if suffix in FORMATS:
        stem = stem.with_suffix("")
        chosen = [suffix] if formats is None else list(formats)
    else:
        chosen = list(formats) if formats is not None else (["png", "pdf"] if pretty else ["png"])
    for fmt in chosen:
        if fmt not in FORMATS:
            raise RLAError(
                f"Unknown figure format {fmt!r}",
                expected=f"one of {', '.join(FORMATS)}",
                found=repr(fmt),
                fix="pass formats=('png',) or ('png', 'pdf')",
            )
    return stem, chosen


def plot_func(
    data_root: Union[str, os.PathLike],
    task_table_name: Optional[str],
    regs: Sequence[str],
    split_keys: Sequence[str],
    metrics: Sequence[str],
    use_buf: bool = False,
    verbose: bool = True,
    xlim: Union[None, float, Tuple[float, float]] = None,
    xlabel: str = "time-step",
    ylabel: Union[None, str, Sequence[str]] = None,
    scale_dict: Optional[Dict[str, Callable]] = None,
    regs2legends: Optional[Sequence[str]] = None,
    key_to_legend_fn: Callable[..., str] = default_key_to_legend,
    split_by_metrics: bool = True,
    save_name: Optional[str] = None,
    *args: Any,
    where: Optional[str] = None,
    hp_filter_dict: Optional[Dict[str, Sequence[Any]]] = None,
    x_key: str = "time-step",
    resample: int = 512,
    smooth_step: float = 1.0,
    agg: str = "mean",
    band_kind: Optional[str] = None,
    vary_len_plot: bool = False,
    final_window: float = 0.1,
    bootstrap_samples: int = 1000,
    pretty: bool = False,
    title: Optional[str] = None,
    ylim: Optional[Tuple[float, float]] = None,
    log: bool = False,
    colors: Optional[Sequence[str]] = None,
    tiling: str = "symmetric",
    figsize: Optional[Tuple[float, float]] = None,
    show_number: bool = True,
    bound_line: Optional[Sequence[Tuple[float, str, str, str]]] = None,
    save_dir: Optional[os.PathLike] = None,
    formats: Optional[Sequence[str]] = None,
    show: bool = False,
    seed: int = 0,
    x_bound: Union[None, float, Tuple[float, float]] = None,
    summarize_res: bool = False,
    legend_outside: bool = False,
    use_marker: bool = False,
    markers: Optional[Sequence[str]] = None,
    legend_ncol: Optional[int] = None,
    skip_legend: bool = False,
    rescale_idx: Optional[float] = None,
    all_tasks: bool = False,
    value_filter: Optional[Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray]]] = None,
    **kwargs: Any,
) -> PlotResult:
    """Plot grouped learning curves of the runs matched by ``regs`` in ``task_table_name``.

    Args:
        data_root: the database root.
        task_table_name: the task (``None``: every task; runs of several tasks then need
            ``all_tasks=True``).
        regs: globs on ``YYYY/MM/DD/<name>`` (the original's "regex"); each selects runs.
        split_keys: hyper-parameters whose values define the groups (one curve each); a run
            column (``task``, ``host`` ...) also works. A key no selected run has is an error.
        metrics: ``progress.csv`` columns; one subplot per metric (a column no selected run
            logged is an error).
        use_buf, verbose: accepted as in the original (``verbose`` prints the final stats).
        xlim: keep ``x <= xlim``, or ``lo <= x <= hi`` for a pair; also the axis range.
        xlabel, ylabel: axis labels (``ylabel`` may be a list, one per metric).
        scale_dict: ``{metric: fn}`` applied to the values (e.g. ``np.log``).
        regs2legends: one legend per reg (each reg becomes one group), in reg order.
        key_to_legend_fn: ``fn(parse_dict, split_keys, y_name, use_y_name) -> legend``.
        split_by_metrics: one subplot per metric (else all metrics in one plot).
        save_name: file name (``.png``/``.pdf``/``.svg`` picks the format) under
            ``<data_root>/results/easy_plot/`` (or ``save_dir``), or an absolute path.
        where: a query expression further filtering the runs.
        hp_filter_dict: ``{key: [allowed values]}`` (polixir's filter).
        x_key: the x column (default ``time-step``).
        resample: grid points (``0``: the union of the logged x values).
        smooth_step: EMA time constant in grid steps (``0``: no smoothing).
        agg: ``mean``, ``median`` or ``iqm`` over seeds.
        band_kind: ``std``, ``stderr``, ``ci`` (bootstrap 95%) or ``none`` (default stderr;
            the original's ``shaded_std=True``/``shaded_err=True`` also work).
        vary_len_plot: plot runs of unequal length over the full range (the count of runs
            per point is in the CSV); by default every group is cut to the x range all of
            its runs cover, and a note says so.
        final_window: fraction of the x range (at its end) the final statistics average over.
        pretty: larger fonts, the pretty palette, PNG+PDF.
        show: call ``plt.show()`` (never done otherwise).
        x_bound: polixir's name of ``xlim``; summarize_res: print the runs each reg found.
        legend_outside, use_marker, markers, legend_ncol, skip_legend: the original's legend
            and marker options; rescale_idx: relabel x to ``[0, rescale_idx]``.
        all_tasks: with ``task_table_name=None`` over runs of several tasks, group by task
            too (one curve per task and split-key values) instead of refusing.
        value_filter: ``fn(x, y) -> (x, y)`` applied to each run's values before ``scale_dict``
            (the v1 face's ``y_bound`` / ``remove_outlier``: :class:`RLA.plot.outliers.ValueFilter`).

    Returns:
        :class:`PlotResult` — unpacks as ``(legends, stats)``.

    Raises:
        RunNotFoundError: no run matches; QueryError: a bad ``where``, an unknown metric or
        split key, runs of several tasks without ``all_tasks``; RLAError: bad options.
    """
    from RLA.query import load_curves, select_runs, warn_skipped

    xlim = x_bound if xlim is None else xlim
    style = {
        "legend_outside": legend_outside,
        "markers": (list(markers or ["o", "v", "d", "P", "p", "s"]) if use_marker else None),
        "legend_ncol": legend_ncol,
        "skip_legend": skip_legend,
    }
    band_kind = _band_from_legacy(kwargs, band_kind or "stderr")
    kwargs.pop("shaded_range", None)
    kwargs.pop("average_group", None)
    if kwargs:
        raise RLAError(
            f"Unknown plot_func option {sorted(kwargs)[0]!r}",
            expected="a documented keyword",
            found=", ".join(sorted(kwargs)),
            fix="see help(RLA.plot_func)",
        )
    if agg not in AGGREGATES or band_kind not in BANDS:
        raise RLAError(
            "Bad agg/band option",
            expected=f"agg in {AGGREGATES}, band in {BANDS}",
            found=f"agg={agg!r}, band={band_kind!r}",
            fix="pick listed values",
        )
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise RLAError(
            "No metric to plot", expected="metrics=['return', ...]", found="[]", fix="name a metric"
        )
    points = check_points(resample)
    data_root = Path(data_root)
    regs = [regs] if isinstance(regs, str) else list(regs or ["*"])
    selection = select_runs(data_root, task=task_table_name, where=where)
    warn_skipped(selection)
    runs_per_reg = []
    from RLA.query.selection import match_selector

    for reg in regs:
        picked = [row for row in selection.runs if match_selector(row.layout, reg)]
        if hp_filter_dict:
            picked = [
                row
                for row in picked
                if all(str(row.params.get(k)) in {str(v) for v in vs} for k, vs in hp_filter_dict.items())
            ]
        runs_per_reg.append(picked)
        if summarize_res:
            print(f"for regex {reg}, we have the following logs:")
            for row in picked:
                print("find log", row.layout.log_dir)
    all_rows = {row.index: row for rows in runs_per_reg for row in rows}
    if not all_rows:
        raise RunNotFoundError(
            f"No run matches regs {regs} in task {task_table_name!r}",
            expected="at least one run",
            found=f"0 of {selection.scanned} runs",
            fix="check regs, where and the task name",
        )
    tasks = check_tasks(all_rows.values(), task_table_name, all_tasks, regs2legends, split_keys)
    split_keys = with_task_key(split_keys, tasks, all_tasks)
    key_notes = [] if regs2legends is not None else check_split_keys(list(all_rows.values()), split_keys)
    curves = load_curves(list(all_rows.values()), metrics, x=x_key, x_bound=xlim)
    skipped = list(selection.skipped) + list(curves.attrs.get("skipped", []))
    notes: List[str] = [f"skipped unreadable run {i}: {p}" for i, p in skipped] + key_notes
    panels: List[Dict[str, Any]] = []
    csv_rows: List[str] = ["metric,legend,n_runs,x,center,low,high,n_at_x"]
    final_rows: List[str] = ["metric,legend,n,mean,median,iqm,std,stderr,ci_low,ci_high,window_start"]
    stats: Dict[str, Dict[str, Any]] = {}
    legends: Dict[str, int] = {}
    original: Dict[str, Dict[str, Any]] = {"g2lf": {}, "score_results": {}}
    use_y_name = not split_by_metrics and len(metrics) > 1
    for metric in metrics:
        part = curves[curves["metric"] == metric]
        per_run = {index: (x, y) for index, x, y in split_xy(part, x_key)}
        fn = (scale_dict or {}).get(metric)
        groups = group_runs(runs_per_reg, split_keys, metric, regs2legends, key_to_legend_fn, use_y_name)
        panel_curves = []
        for color_index, group in enumerate(groups):
            data = [per_run[row.index] for row in group.runs if row.index in per_run]
            if not data:
                notes.append(f"{metric}: group {group.legend!r} has no data")
                continue
            if value_filter is not None:
                data = [value_filter(x, y) for x, y in data]
            if fn is not None:
                data = [(x, np.asarray(fn(y), dtype=float)) for x, y in data]
            grid = common_grid(data, points, vary_len_plot)
            longest = max(float(x[-1]) for x, _ in data)
            if not vary_len_plot and grid[-1] < longest:
                notes.append(
                    f"{metric}: {group.legend!r}: {len(data)} runs cut to x <= {grid[-1]:g} "
                    f"(the shortest run); pass vary_len_plot=True (rla plot --vary-len) to keep "
                    "the tails"
                )
            raw, smooth = stack(data, grid, smooth_step)
            original_scores(original, metric, group.legend, smooth)
            if rescale_idx is not None and grid[-1] > grid[0]:
                grid = (grid - grid[0]) / (grid[-1] - grid[0]) * float(rescale_idx)
            center = aggregate(smooth, agg)
            low, high = band(smooth, center, band_kind, agg, bootstrap_samples, seed)
            n_at = counts(smooth)
            legends[group.legend] = len(data)
            panel_curves.append(
                {
                    "legend": group.legend,
                    "n": len(data),
                    "x": grid,
                    "center": center,
                    "low": low,
                    "high": high,
                    "color_index": color_index,
                }
            )
            for i in range(grid.size):
                csv_rows.append(
                    ",".join(
                        [_cell(metric), _cell(group.legend), str(len(data))]
                        + [_number(v) for v in (grid[i], center[i], low[i], high[i], n_at[i])]
                    )
                )
            scores, start = final_scores(raw, grid, final_window)
            summary = final_stats(scores, bootstrap_samples, seed)
            if summary["n"] < len(data):
                notes.append(
                    f"{metric}: {group.legend!r}: {len(data) - summary['n']} runs end before the final "
                    f"window (x >= {start:g}) and are left out of its statistics"
                )
            summary["window_start"] = float(start)
            stats.setdefault(metric, {})[group.legend] = summary
            final_rows.append(
                ",".join(
                    [_cell(metric), _cell(group.legend)]
                    + [
                        _number(summary[k])
                        for k in ("n", "mean", "median", "iqm", "std", "stderr", "ci_low", "ci_high")
                    ]
                    + [_number(start)]
                )
            )
        panels.append({"title": metric, "curves": panel_curves})
    if not split_by_metrics and len(panels) > 1:
        merged = [dict(c, color_index=i) for i, c in enumerate(c for p in panels for c in p["curves"])]
        panels = [{"title": ", ".join(metrics), "curves": merged}]
    ylabels = (
        [ylabel] * len(panels) if isinstance(ylabel, str) else list(ylabel or [p["title"] for p in panels])
    )
    xrange = (
        (0.0, float(xlim)) if isinstance(xlim, (int, float)) else (tuple(xlim) if xlim is not None else None)
    )
    from RLA.plot.draw import draw

    fig = draw(
        panels,
        xlabel,
        ylabels,
        title,
        pretty,
        colors,
        tiling,
        figsize,
        xrange,
        ylim,
        log,
        show_number,
        bound_line,
        show,
        style=style,
    )
    default = f"{(task_table_name or 'all').replace('/', '-')}-{'-'.join(metrics)}"
    stem, chosen = _stem_and_formats(data_root, save_name, save_dir, formats, pretty, default)
    files = _save_figure(fig, stem, chosen)
    for suffix, rows in ((".csv", csv_rows), ("-final.csv", final_rows)):
        path = stem.with_name(stem.name + suffix)
        atomic_write_text(path, "\n".join(rows) + "\n", durable=False)
        files.append(path)
    if verbose:
        from RLA.terminal import escape

        for note in notes:  # legends and notes quote hyper-parameter values from the runs
            print(f"[plot] {escape(note)}")
        for metric, by_legend in stats.items():
            for legend, s in by_legend.items():
                print(
                    f"[plot] {escape(metric)} | {escape(legend)} ({s['n']} runs): final {agg} window x>={s['window_start']:g}: "
                    f"mean {s['mean']:.4g} ± {s['stderr']:.3g} (stderr), median {s['median']:.4g}, "
                    f"IQM {s['iqm']:.4g}, 95% CI [{s['ci_low']:.4g}, {s['ci_high']:.4g}]"
                )
        print(f"[plot] saved {escape(', '.join(str(p) for p in files))}")
    if show:
        import matplotlib.pyplot as plt

        plt.show()
    result = PlotResult(legends, stats, files, fig, notes, skipped)
    result.g2lf, result.score_results = original["g2lf"], original["score_results"]
    return result


def _number(value: Any) -> str:
    """A CSV cell of a number, plain (``0.34``, never ``np.float64(0.34)``; integers stay integers)."""
    value = plain(value)
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _cell(text: str) -> str:
    """A CSV cell (quoted when needed)."""
    import csv

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([text])
    return buffer.getvalue()
