"""``plot_func``: grouped learning curves over seeds, saved as a figure plus CSVs of the numbers.

The face of the plot stages (:mod:`RLA.plot.pipeline`): the signature of the original
project's ``RLA.plot_func`` is kept (its fifteen positional parameters in order, the rest
by keyword); the statistics are new: mean/median/IQM over seeds, std/stderr/bootstrap-CI
bands, an explicit policy for runs of unequal length, and final-window statistics returned
and written to ``<stem>-final.csv``.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from RLA.plot.grouping import default_key_to_legend
from RLA.plot.options import (
    FigureOptions,
    SaveOptions,
    StatOptions,
    check_points,
    check_stat_options,
    legacy_band,
    metric_list,
    refuse_positional,
    refuse_unknown,
    style_of,
)
from RLA.plot.result import PlotResult
from RLA.plot.save import FORMATS

__all__ = ["FORMATS", "PlotResult", "plot_func"]


# The stages are in RLA.plot.pipeline.run_plot; this face holds no logic beyond the argument checks.
# size: the original's 48 parameters, their documentation and their hand-over by name to the stage options
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
    save_dir: Union[None, str, os.PathLike] = None,
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
        *args: refused (the original's options after ``save_name`` are keyword-only: its
            ``plot_results`` failed on extra positional arguments); see
            :func:`RLA.plot.options.refuse_positional`.
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
        split key, runs of several tasks without ``all_tasks``; RLAError: bad options, an
        unknown keyword, or a positional argument after ``save_name``.
    """
    from RLA.plot.pipeline import PlotRequest, run_plot
    from RLA.plot.select import RunQuery, reg_list

    refuse_positional(args)
    band_kind = legacy_band(kwargs, band_kind)
    refuse_unknown(kwargs)
    check_stat_options(agg, band_kind)
    metrics = metric_list(metrics)
    stat = StatOptions(
        points=check_points(resample),
        smooth_step=smooth_step,
        agg=agg,
        band_kind=band_kind,
        vary_len=vary_len_plot,
        final_window=final_window,
        bootstrap_samples=bootstrap_samples,
        seed=seed,
        rescale_idx=rescale_idx,
    )
    xlim = x_bound if xlim is None else xlim
    look = FigureOptions(
        xlabel=xlabel,
        ylabel=ylabel,
        title=title,
        pretty=pretty,
        colors=colors,
        tiling=tiling,
        figsize=figsize,
        xlim=xlim,
        ylim=ylim,
        log=log,
        show_number=show_number,
        bound_line=bound_line,
        show=show,
        style=style_of(legend_outside, use_marker, markers, legend_ncol, skip_legend),
    )
    query = RunQuery(
        data_root=data_root,
        task=task_table_name,
        regs=reg_list(regs),
        split_keys=split_keys,
        where=where,
        hp_filter_dict=hp_filter_dict,
        regs2legends=regs2legends,
        all_tasks=all_tasks,
        summarize_res=summarize_res,
    )
    request = PlotRequest(
        query=query,
        metrics=metrics,
        x_key=x_key,
        x_bound=xlim,
        value_filter=value_filter,
        scale_dict=scale_dict,
        key_to_legend_fn=key_to_legend_fn,
        split_by_metrics=split_by_metrics,
        stats=stat,
        figure=look,
        output=SaveOptions(save_name=save_name, save_dir=save_dir, formats=formats, pretty=pretty),
        verbose=verbose,
    )
    return run_plot(request)
