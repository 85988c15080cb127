"""The original ``delete_expt.py``: delete runs (to the trash) — now ``rla delete``.

Usage: ``python -m rla_scripts.delete_expt --task_table_name T --regex R
[--delete_type all|small_ts --timestep_bound 100] [--data_root D] [--purge]``.
"""

from __future__ import annotations

import sys
from typing import List, Optional

from RLA.errors import RLAError
from rla_scripts.legacy_args import legacy_parser, run_legacy, selection_args


def main(argv: Optional[List[str]] = None) -> int:
    parser = legacy_parser("Delete the matching runs (every data type) to <data_root>/.trash/.")
    parser.add_argument("--delete_type", choices=("all", "small_ts"), default="all")
    parser.add_argument("--timestep_bound", type=float, default=100)
    parser.add_argument("--purge", action="store_true", help="delete permanently")

    def build(args) -> List[str]:
        if not args.regex and not args.task:
            raise RLAError(
                "No runs named",
                expected="--task_table_name and/or --regex",
                found="neither",
                fix="pass --regex '*' to select every run",
            )
        command = ["delete"] + selection_args(args)
        if args.delete_type == "small_ts":
            command += ["--max-time-step", str(args.timestep_bound)]
        return command + (["--purge"] if args.purge else [])

    return run_legacy(build, parser, argv)


if __name__ == "__main__":
    sys.exit(main())
