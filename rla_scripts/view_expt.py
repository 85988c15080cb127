"""The original ``view_expt.py``: show the matching runs — now ``rla list`` / ``rla view``.

Usage: ``python -m rla_scripts.view_expt --task_table_name T --regex R [--data_root D]``.
One matching run is shown in full (``rla view``); several are listed (``rla list``).
"""

from __future__ import annotations

import sys
from typing import List, Optional

from rla_scripts.legacy_args import legacy_parser, selection_args


def main(argv: Optional[List[str]] = None) -> int:
    from RLA.errors import RLAError
    from rla_scripts.cli import main as rla_main
    from rla_scripts.commands._common import resolve_data_root, select

    parser = legacy_parser("Show the matching runs: hyper-parameters, status and last metrics.")
    args = parser.parse_args(argv)
    command = ["list"] + selection_args(args) + (["--data-root", args.data_root] if args.data_root else [])
    try:
        root = resolve_data_root(args.data_root)
        args.runs, args.where, args.since, args.until, args.status = [], None, None, None, None
        args.regex = [args.regex] if args.regex else None
        rows = select(args, root).runs
    except RLAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    if len(rows) == 1:
        command = ["view", rows[0].index, "--data-root", str(root)]
    return rla_main(command)


if __name__ == "__main__":
    sys.exit(main())
