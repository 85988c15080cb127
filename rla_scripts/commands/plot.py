"""``rla plot``: grouped learning curves of the selected runs (figure + CSV + final stats)."""

from __future__ import annotations

import argparse
import warnings

from RLA.text import count
from rla_scripts.commands._common import add_data_root, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from RLA.plot import plot_func

    data_root = resolve_data_root(args.data_root)
    if args.dry_run:
        from RLA.plot.checks import check_split_keys, check_tasks, with_task_key
        from rla_scripts.commands._common import require_runs, select

        rows = require_runs(select(args, data_root), args, data_root)
        tasks = check_tasks(rows, args.task, args.all_tasks, split_keys=args.split_keys)
        keys = with_task_key(args.split_keys, tasks, args.all_tasks)
        check_split_keys(rows, keys)
        print(
            f"would plot {', '.join(args.metrics)} of {count(len(rows), 'run')} grouped by {', '.join(keys) or '(all)'}"
        )
        return 0
    from RLA.query import BrokenRunWarning
    from rla_scripts.commands._common import report_skipped

    with warnings.catch_warnings():  # reported below as one `warning: skipped` line each
        warnings.simplefilter("ignore", BrokenRunWarning)
        result = plot_func(
            data_root,
            args.task,
            args.regex or ["*"],
            args.split_keys,
            args.metrics,
            xlim=args.xlim,
            where=args.where,
            x_key=args.x,
            xlabel=args.x,
            resample=args.resample,
            smooth_step=args.smooth,
            agg=args.agg,
            band_kind=args.band,
            vary_len_plot=args.vary_len,
            final_window=args.final_window,
            pretty=args.pretty,
            title=args.title,
            save_name=str(Path(args.out).expanduser()) if args.out else None,
            save_dir=Path.cwd(),
            formats=args.formats,
            all_tasks=args.all_tasks,
            verbose=True,
        )
    report_skipped(result.skipped)
    return 0 if result.files else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="plot grouped curves (mean over seeds with bands)",
        description="Group the selected runs by hyper-parameters and plot each "
        "metric: mean/median/IQM over seeds with std/stderr/bootstrap-CI "
        "bands; writes the figure, a CSV of the plotted numbers and the "
        "final-window statistics.",
    )
    add_data_root(parser)
    parser.add_argument("--task", "--task_table_name", dest="task", help="task (table) name")
    parser.add_argument(
        "--regex", action="append", metavar="GLOB", help="glob on YYYY/MM/DD/<name> (repeatable)"
    )
    parser.add_argument("--where", metavar="EXPR", help="typed filter on hyper-parameters and metrics")
    parser.add_argument("--metrics", nargs="+", required=True, metavar="M", help="progress.csv columns")
    parser.add_argument(
        "--split-keys", nargs="*", default=[], metavar="K", help="group by these hyper-parameters"
    )
    parser.add_argument("--x", default="time-step", help="x column (default time-step)")
    parser.add_argument("--xlim", type=float, help="keep x <= XLIM")
    parser.add_argument("--resample", type=int, default=512, help="grid points (0: logged x values)")
    parser.add_argument("--smooth", type=float, default=1.0, help="EMA time constant in grid steps (0: none)")
    parser.add_argument("--agg", choices=("mean", "median", "iqm"), default="mean")
    parser.add_argument("--band", choices=("std", "stderr", "ci", "none"), default="stderr")
    parser.add_argument("--vary-len", action="store_true", help="keep the tails of runs of unequal length")
    parser.add_argument(
        "--all-tasks",
        action="store_true",
        help="without --task over runs of several tasks: one curve per task (else an error)",
    )
    parser.add_argument("--final-window", type=float, default=0.1, help="fraction of x for final statistics")
    parser.add_argument("--pretty", action="store_true", help="paper style, PNG+PDF")
    parser.add_argument("--title")
    parser.add_argument(
        "--out",
        help="figure path, relative to the current folder (.png/.pdf/.svg picks the "
        "format); the CSVs go next to it. Default: ./<task>-<metrics>.png",
    )
    parser.add_argument("--formats", nargs="+", choices=("png", "pdf", "svg"))
    parser.add_argument("--dry-run", action="store_true", help="count the runs, write nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry; never prompts")
    parser.set_defaults(func=run, since=None, until=None, status=None, runs=[])
