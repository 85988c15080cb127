"""``rla migrate``: copy (or move) the selected runs to another task and/or data root."""

from __future__ import annotations

import argparse
from pathlib import Path

from rla_scripts.commands._common import (
    add_change_options,
    add_selection,
    check_selection_args,
    finish_interrupted,
    has_selector,
    require_runs,
    resolve_data_root,
    run_plan,
    select,
)


def run(args: argparse.Namespace) -> int:
    from RLA.errors import RLAError
    from RLA.ops import plan_migrate

    check_selection_args(args)
    if not has_selector(args):
        raise RLAError(
            "No runs named",
            expected="RUN arguments or --task/--regex/--where filters",
            found="no selector",
            fix="name the runs to migrate",
        )
    data_root = resolve_data_root(args.data_root)
    if args.convert_legacy_state:
        from rla_scripts.commands.convert_legacy import convert

        return convert(args, data_root)
    if args.to_task is not None:
        from RLA.layout import check_task

        check_task(args.to_task, "target task")
    finish_interrupted(data_root, args)
    target_root = Path(args.to_data_root) if args.to_data_root else None
    if target_root is not None and not target_root.is_dir():
        raise RLAError(
            f"The target data root {target_root} does not exist",
            expected="an existing folder",
            found="no such folder",
            fix="create it first",
        )
    rows = require_runs(select(args, data_root, include_broken=True), args, data_root)
    plan = plan_migrate(
        data_root,
        [row.layout for row in rows],
        to_task=args.to_task,
        to_data_root=target_root,
        move=args.move,
    )
    return run_plan(plan, args, "move" if args.move else "copy")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="copy/move runs to another task or data root",
        description="Copy (default) or move every data type of the selected runs "
        "to another task and/or data root; run.json follows.",
    )
    add_selection(parser)
    add_change_options(parser)
    parser.add_argument("--to-task", "--target_task_table_name", dest="to_task", help="target task")
    parser.add_argument("--to-data-root", "--target_proj_root", dest="to_data_root", help="target data root")
    parser.add_argument("--move", action="store_true", help="move instead of copy")
    parser.add_argument(
        "--convert-legacy-state",
        action="store_true",
        help="convert your own runs' pickled state (the original RLA's archive_tester/*.pkl) "
        "to JSON with a restricted unpickler, once; nothing is copied",
    )
    parser.set_defaults(func=run)
