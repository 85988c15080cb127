"""``rla path RUN``: print a run's folder, quoted for the shell (run names contain ``&``)."""

from __future__ import annotations

import argparse
import shlex

from rla_scripts.commands._common import add_data_root, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from RLA.errors import RLAError
    from RLA.layout import DATA_TYPES, find_run

    data_root = resolve_data_root(args.data_root)
    layout = find_run(data_root, args.run, task=args.task, archived=args.archived)
    path = layout.path(args.type)
    if not path.exists():
        present = sorted(layout.existing_paths())
        raise RLAError(
            f"The run {layout.index} has no {args.type} data",
            expected=f"one of the data types it has: {', '.join(present) or 'none'}",
            found=f"no {path}",
            fix=f"pass --type {present[0]}"
            if present
            else f"check the run; data types are {', '.join(DATA_TYPES)}",
        )
    print(str(path) if args.raw else shlex.quote(str(path)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from RLA.layout import DATA_TYPES, LOG

    parser = subparsers.add_parser(
        "path",
        help="print a run's folder, quoted for the shell",
        description="Print the folder of one run for a data type, quoted for the shell, e.g. "
        "rla path 2026/11/25/14-00 to paste into a command line (run names contain '&', which a "
        "shell would take as 'run in the background'), or cd \"$(rla path 2026/11/25/14-00 --raw)\" "
        "(a shell keeps the quotes of a substitution's output, so use --raw there).",
    )
    parser.add_argument("run", help="index, record date, or a unique prefix/glob of YYYY/MM/DD/<name>")
    parser.add_argument("--type", choices=DATA_TYPES, default=LOG, help="data type (default: log)")
    parser.add_argument("--task", help="task of the run (when the selector is not unique)")
    parser.add_argument("--archived", action="store_true", help="the run lives under arc/")
    parser.add_argument("--raw", action="store_true", help="print the path unquoted")
    add_data_root(parser)
    parser.set_defaults(func=run)
