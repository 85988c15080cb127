"""The original ``archive_expt.py``: copy runs to ``arc/`` (now ``rla archive --copy``).

Usage: ``python -m rla_scripts.archive_expt --task_table_name T --regex '2026/11/01/*' [--data_root D]``.
Pass ``--move`` to move instead of copying (``rla archive``'s default). Afterwards,
``tensorboard --logdir ./log/T/,./arc/log/T/`` shows both.
"""

from __future__ import annotations

import sys
from typing import List, Optional

from rla_scripts.legacy_args import legacy_parser, run_legacy, selection_args


def main(argv: Optional[List[str]] = None) -> int:
    parser = legacy_parser("Archive the matching runs (every data type) to <data_root>/arc/.")
    parser.add_argument("--move", action="store_true", help="move instead of copy")

    def build(args) -> List[str]:
        return ["archive"] + selection_args(args) + ([] if args.move else ["--copy"])

    return run_legacy(build, parser, argv)


if __name__ == "__main__":
    sys.exit(main())
