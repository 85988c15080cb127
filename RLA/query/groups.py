"""Final statistics over seeds per group of runs (``rla list --group-by lr --metrics return``).

The runs are grouped by the values of some hyper-parameters (or run columns), as ``rla plot
--split-keys`` groups its curves, and each group's final-window scores are summarised with
the statistics of :mod:`RLA.plot.final` (n, mean, median, IQM, std, stderr, 95% bootstrap
CI of the mean): the numbers of ``rla plot``'s ``-final.csv`` for the same runs and options.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from RLA.plot.final import FINAL_WINDOW, POINTS

#: The statistics columns, in ``-final.csv``'s order.
STAT_COLUMNS = ("n", "mean", "median", "iqm", "std", "stderr", "ci_low", "ci_high", "window_start")


def group_final_frame(
    rows: Sequence[Any],
    keys: Sequence[str],
    metrics: Sequence[str],
    x: str = "time-step",
    final_window: float = FINAL_WINDOW,
    vary_len: bool = False,
    points: int = POINTS,
    samples: int = 1000,
    seed: int = 0,
) -> Any:
    """One row per group and metric: the key values, ``metric``, ``runs`` (in the group), then
    :data:`STAT_COLUMNS` (``n``: the runs with a score in the final window).

    Args:
        rows: the selected runs (:class:`RLA.query.RunRow`).
        keys: hyper-parameters or run columns to group by; ``task`` is added first when the
            runs belong to several tasks (their scores are not comparable).
        metrics: ``progress.csv`` columns (none: only the groups and their sizes).
        x, final_window, vary_len, points: as ``rla plot``'s ``--x``, ``--final-window``,
            ``--vary-len`` and ``--resample``.

    Returns:
        A DataFrame; ``attrs['keys']`` the grouping keys, ``attrs['notes']`` the keys some
        runs lack, ``attrs['skipped']`` the runs whose curves could not be read.

    Raises:
        QueryError: a key no run has or a metric no run logged (with "did you mean").
    """
    import pandas as pd

    from RLA.plot.checks import check_split_keys, check_tasks, with_task_key

    rows = list(rows)
    keys = with_task_key(keys, check_tasks(rows, None, True, split_keys=keys), True)
    notes = check_split_keys(rows, keys) if rows else []
    records, skipped = _records(rows, keys, list(metrics), x, final_window, vary_len, points, samples, seed)
    columns = list(keys) + (["metric", "runs", *STAT_COLUMNS] if metrics else ["runs"])
    frame = pd.DataFrame(records, columns=columns)
    frame.attrs.update(keys=list(keys), notes=notes, skipped=skipped, final_window=final_window, x=x)
    return frame


def _records(
    rows: List[Any],
    keys: Sequence[str],
    metrics: List[str],
    x: str,
    final_window: float,
    vary_len: bool,
    points: int,
    samples: int,
    seed: int,
) -> Tuple[List[Dict[str, Any]], List[Any]]:
    import numpy as np

    from RLA.plot.checks import split_value
    from RLA.plot.final import group_final_stats
    from RLA.plot.grouping import NOT_FOUND, group_runs
    from RLA.plot.resample import split_xy
    from RLA.plot.stats import final_stats

    groups = group_runs([rows], keys, metrics[0] if metrics else "")
    records: List[Dict[str, Any]] = []
    if not metrics or not rows:
        for group in groups:
            records.append(
                {**{k: split_value(group.runs[0], k, NOT_FOUND) for k in keys}, "runs": len(group.runs)}
            )
        return records, []
    from RLA.query.curves import load_curves

    curves = load_curves(rows, metrics, x=x)
    for metric in metrics:
        per_run = {index: (xs, ys) for index, xs, ys in split_xy(curves[curves["metric"] == metric], x)}
        for group in groups:
            data = [per_run[row.index] for row in group.runs if row.index in per_run]
            summary = (
                group_final_stats(data, points, vary_len, final_window, samples, seed)
                if data
                else dict(final_stats(np.empty(0)), window_start=float("nan"))
            )
            records.append(
                {
                    **{k: split_value(group.runs[0], k, NOT_FOUND) for k in keys},
                    "metric": metric,
                    "runs": len(group.runs),
                    **{c: summary[c] for c in STAT_COLUMNS},
                }
            )
    return records, list(curves.attrs.get("skipped", []))


def summary_table(frame: Any) -> Any:
    """The grouped frame for reading: one row per group, ``runs``, then one column per metric
    holding ``mean [ci_low, ci_high]`` (with ``n=`` when fewer runs reach the final window)."""
    import pandas as pd

    keys = list(frame.attrs.get("keys", []))
    if "metric" not in frame.columns:
        return frame[keys + ["runs"]]
    out: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
    for _, row in frame.iterrows():
        group = tuple(row[k] for k in keys)
        cells = out.setdefault(group, {**{k: row[k] for k in keys}, "runs": row["runs"]})
        cells[f"{row['metric']} mean [95% CI]"] = _interval(row)
    return pd.DataFrame(list(out.values()))


def _interval(row: Any) -> str:
    if not row["n"]:
        return "-"
    text = f"{row['mean']:.4g} [{row['ci_low']:.4g}, {row['ci_high']:.4g}]"
    return text if row["n"] == row["runs"] else f"{text} n={row['n']}"
