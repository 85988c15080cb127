"""``rla list --group-by KEY --metrics M``: final statistics over seeds per group of runs."""

from __future__ import annotations

import argparse
import sys
from typing import Any, List

from RLA.errors import QueryError


def add_options(parser: argparse.ArgumentParser) -> None:
    """``--group-by``, ``--final-window``, ``--vary-len``."""
    parser.add_argument(
        "--group-by",
        nargs="+",
        metavar="KEY",
        help="one row per value of these hyper-parameters: the runs (seeds) in each and, with "
        "--metrics, the mean and 95%% bootstrap CI of their final values (as rla plot's "
        "-final.csv)",
    )
    parser.add_argument(
        "--final-window",
        type=float,
        default=None,
        metavar="F",
        help="with --group-by: a run's final value is its mean over the last F of the x range "
        "(default 0.1, as rla plot)",
    )
    parser.add_argument(
        "--vary-len",
        action="store_true",
        help="with --group-by: keep the tails of runs of unequal length (as rla plot --vary-len)",
    )


def check_options(args: argparse.Namespace) -> None:
    """Refuse options that mean nothing for groups, and a bad ``--final-window``.

    Raises:
        QueryError: the first such option.
    """
    if not args.group_by:
        if args.final_window is not None or args.vary_len:
            raise QueryError(
                "--final-window and --vary-len need --group-by",
                expected="--group-by KEY --metrics M",
                found="--final-window" if args.final_window is not None else "--vary-len",
                fix="add --group-by, or drop the option",
            )
        return
    for option in ("columns", "sort", "limit"):
        if getattr(args, option):
            raise QueryError(
                f"--{option} does not apply to --group-by",
                expected="groups in key order, all shown",
                found=f"--{option} {getattr(args, option)}",
                fix=f"drop --{option}",
            )
    window = args.final_window
    if window is not None and not 0 < window <= 1:
        raise QueryError(
            f"Bad --final-window {window:g}",
            expected="a fraction 0 < F <= 1",
            found=f"{window:g}",
            fix="e.g. --final-window 0.1 (the last tenth of the x range)",
        )


def show(args: argparse.Namespace, rows: List[Any], width: int) -> int:
    """Print the grouped statistics of ``rows`` as a table, CSV or JSON."""
    from RLA.plot.final import FINAL_WINDOW
    from RLA.query.groups import group_final_frame, summary_table
    from RLA.query.table import count_text
    from RLA.terminal import escape
    from rla_scripts.commands._common import report_skipped
    from rla_scripts.commands._listing import print_table

    window = FINAL_WINDOW if args.final_window is None else args.final_window
    frame = group_final_frame(
        rows, args.group_by, args.metrics or [], final_window=window, vary_len=args.vary_len
    )
    for note in frame.attrs["notes"]:
        print(f"note: {escape(note)}", file=sys.stderr)
    report_skipped(frame.attrs["skipped"])
    if args.format == "csv":
        from rla_scripts.commands.list import escape_frame

        (escape_frame(frame) if sys.stdout.isatty() else frame).to_csv(sys.stdout, index=False)
        return 0
    if args.format == "json":
        print(frame.to_json(orient="records", default_handler=str))
        return 0
    table = summary_table(frame)
    footer = f"{count_text(len(table), 'group')}, {count_text(len(rows))}"
    if args.metrics:
        footer += (
            f"; a run's final value: its mean over the last {window * 100:g}% of {frame.attrs['x']} (as rla plot's "
            "-final.csv); [95% bootstrap CI of the mean over the runs]"
        )
    print_table(table, list(table.columns), list(table.columns), width, footer, explicit=True)
    return 0
