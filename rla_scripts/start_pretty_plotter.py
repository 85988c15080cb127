"""The original ``start_pretty_plotter.py``: write ``parameter.json`` for each matching run.

Usage: ``python -m rla_scripts.start_pretty_plotter --task_table_name T --regex R
[--data_root D]``. The original then started the external ``smart_logger`` web plotter
(``--start_server``, ``--workspace_path``, ``--user_name``, ``--password``, ``--port`` are
accepted); RLA's ``rla plot`` / ``rla ui`` replace it, so no server is started here.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from RLA.errors import RLAError
from rla_scripts.script_config import default_data_root


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Write parameter.json of the matching runs for plotters.")
    parser.add_argument("--task_table_name", default="")
    parser.add_argument("--regex", default="*")
    parser.add_argument("--timestep_bound", type=int, default=100)
    parser.add_argument("--delete_type", default="all")
    parser.add_argument("--workspace_path", "-wks", default="~/.pretty_plotter_cache")
    parser.add_argument("--user_name", "-u", default="user")
    parser.add_argument("--password", "-pw", default="")
    parser.add_argument("--port", "-p", type=int, default=7005)
    parser.add_argument("--start_server", dest="start_server", action="store_true", default=False)
    parser.add_argument("--no-start_server", dest="start_server", action="store_false")
    parser.add_argument("--data_root", default=None)
    args = parser.parse_args(argv)
    from RLA.easy_log.log_tools import PrettyPlotterTool

    try:
        tool = PrettyPlotterTool(args.data_root or default_data_root(), args.task_table_name, args.regex)
        written = tool.gen_json(args.regex)
    except RLAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.start_server:
        print("the smart_logger server is not part of RLA: use `rla plot` or `rla ui`", file=sys.stderr)
    print(f"{len(written)} parameter.json written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
