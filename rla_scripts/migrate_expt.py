"""polixir's ``migrate_expt.py``: copy runs to another task (and data root) — now ``rla migrate``.

Usage: ``python -m rla_scripts.migrate_expt --task_table T --target_task_table T2 --regex R
[--proj_root D] [--target_proj_root D2]``. ``--proj_root`` defaults to ``DATA_ROOT`` of a
``config.py``/``rla_script_config.py`` in the current folder (the original's convention),
else the usual data-root lookup.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from RLA.errors import RLAError
from rla_scripts.script_config import default_data_root


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Copy the matching runs to another task table.")
    parser.add_argument("--task_table", "--task_table_name", dest="task", default="")
    parser.add_argument("--target_task_table", default=None)
    parser.add_argument("--regex", default="*")
    parser.add_argument("--proj_root", default=None)
    parser.add_argument("--target_proj_root", default=None)
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask")
    args = parser.parse_args(argv)
    from RLA.easy_log.log_tools import MigrateLogTool

    try:
        root = args.proj_root or default_data_root()
        tool = MigrateLogTool(
            root,
            args.task,
            args.regex,
            args.target_task_table or args.task,
            target_proj_root=args.target_proj_root,
        )
        tool.migrate_log(skip_ask=args.yes)
    except RLAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
