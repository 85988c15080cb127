"""``rla list``: the selected runs as a readable table, CSV or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any, List

from rla_scripts.commands._common import add_selection, resolve_data_root

FORMATS = ("table", "csv", "json")


def choose_columns(frame: Any, args: argparse.Namespace) -> List[str]:
    """The columns shown: ``--columns``, else index, status, host, the hyper-parameters that
    vary between runs (or every one for a single run), then ``last(m)`` for ``--metrics``."""
    from RLA.errors import QueryError

    if args.columns:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in frame.columns]
        if unknown:
            raise QueryError(
                f"Unknown column {unknown[0]!r}",
                expected=f"one of {', '.join(map(str, frame.columns))}",
                found=repr(unknown[0]),
                fix="pick listed columns",
            )
        return wanted
    params = frame.attrs.get("param_columns", [])
    if len(frame) > 1:
        params = [p for p in params if frame[p].astype(str).nunique(dropna=False) > 1]
    metrics = []
    for name in args.metrics or []:
        column = f"last({name})"
        if column not in frame.columns:
            raise QueryError(
                f"No listed run logged {name!r}",
                expected="a progress.csv column",
                found=", ".join(
                    c[5:-1] for c in frame.attrs.get("metric_columns", []) if c.startswith("last(")
                )
                or "none",
                fix="check --metrics",
            )
        metrics.append(column)
    return ["index", "status", "start_time", "host"] + params + metrics


def escape_frame(frame: Any) -> Any:
    """A copy of ``frame`` whose column names and text cells are safe on a terminal
    (see :mod:`RLA.terminal`); numbers and times are left as they are."""
    import pandas as pd

    from RLA.terminal import escape

    def cell(value: Any) -> Any:
        if isinstance(value, str):
            return escape(value)
        if isinstance(value, (tuple, list, dict, bytes)):
            return escape(repr(value) if isinstance(value, bytes) else str(value))
        return value

    out = frame.rename(columns=lambda c: escape(c))
    for i in range(out.shape[1]):
        if not pd.api.types.is_numeric_dtype(out.dtypes.iloc[i]) and not pd.api.types.is_datetime64_any_dtype(
            out.dtypes.iloc[i]
        ):
            out.isetitem(i, out.iloc[:, i].map(cell))
    return out


def run(args: argparse.Namespace) -> int:
    from RLA.query import rows_to_frame
    from RLA.query.table import count_text
    from rla_scripts.commands import _list_csv, _list_groups, _listing

    _list_groups.check_options(args)
    # --group-by reads the curves' final values; a plain listing needs only the index
    data_root = resolve_data_root(args.data_root, new_ok=True, files=bool(args.group_by))
    archived = None if args.all else args.archived
    if _list_csv.wanted(args) and _list_csv.stream(args, data_root, archived):
        return 0  # written from the index's columns: the same bytes as the frame below
    selection = _listing.select_or_nothing(args, data_root, archived)
    if selection is None:
        _listing.note_new_root(data_root)
    if args.group_by:
        return _list_groups.show(
            args, list(selection.runs) if selection else [], _listing.terminal_width(args.width)
        )
    frame = _listing.sort_runs(rows_to_frame(selection.runs if selection else []), args.sort)
    total = len(frame)
    if args.limit:
        frame = frame.head(args.limit)
    shown = frame if args.format != "table" and not args.columns else frame[choose_columns(frame, args)]
    if args.format == "csv":
        # Data for tools: written as it is, unless it goes straight to a terminal.
        (escape_frame(shown) if sys.stdout.isatty() else shown).to_csv(sys.stdout, index=False)
    elif args.format == "json":
        print(shown.to_json(orient="records", date_format="iso", default_handler=str))
    else:
        skipped = selection.skipped if selection else []
        what = "damaged, listed anyway" if args.include_broken else "unreadable, skipped"
        footer = (
            count_text(len(frame)) if len(frame) == total else f"{len(frame)} of {count_text(total)}"
        ) + (f" ({len(skipped)} {what})" if skipped else "")
        _listing.print_table(
            shown,
            list(shown.columns),
            _listing.importance(list(shown.columns)),
            _listing.terminal_width(args.width),
            footer,
            explicit=bool(args.columns),
        )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list runs (table, csv or json)",
        description="List the runs of the database with their status, "
        "hyper-parameters and last metric values.",
    )
    add_selection(parser)
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--columns", help="comma-separated columns to show")
    parser.add_argument(
        "--metrics",
        nargs="+",
        metavar="M",
        help="add last(M) columns to the table (with --group-by: M's final statistics per group)",
    )
    parser.add_argument(
        "--sort",
        metavar="COLUMN",
        help="sort by columns, comma-separated; -COL descending (--sort -seed or --sort=-seed); "
        "default: newest first",
    )
    parser.add_argument(
        "--width",
        type=int,
        metavar="N",
        help="table width in characters (default: the terminal's; 0: no limit)",
    )
    parser.add_argument("--limit", type=int, help="show at most N runs")
    parser.add_argument("--archived", action="store_true", help="list archived runs (under arc/)")
    parser.add_argument("--all", action="store_true", help="list active and archived runs")
    parser.add_argument("--include-broken", action="store_true", help="also list runs that could not be read")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="check every folder and every run's files now instead of trusting the index "
        "(finds hand edits of ended runs at once)",
    )
    from rla_scripts.commands._list_groups import add_options

    add_options(parser)
    parser.set_defaults(func=run)
