"""``rla archive``: move (or copy) every data type of the selected runs to ``arc/``."""

from __future__ import annotations

import argparse

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
    from RLA.ops import plan_archive

    check_selection_args(args)
    if not has_selector(args):
        raise RLAError(
            "No runs named",
            expected="RUN arguments or --task/--regex/--where filters",
            found="no selector",
            fix="name the runs to archive (rla archive --task T --regex GLOB)",
        )
    data_root = resolve_data_root(args.data_root)
    finish_interrupted(data_root, args)
    rows = require_runs(select(args, data_root, archived=args.restore, include_broken=True), args, data_root)
    plan = plan_archive(data_root, [row.layout for row in rows], copy=args.copy, restore=args.restore)
    return run_plan(plan, args, "restore" if args.restore else "archive")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "archive",
        help="archive runs to arc/ (all data types together)",
        description="Move the selected runs (log, code, checkpoint, results, replay, "
        "archive_tester) to <data_root>/arc/; --restore moves them back.",
    )
    add_selection(parser)
    add_change_options(parser)
    parser.add_argument("--copy", action="store_true", help="keep the originals (copy, as the original tool)")
    parser.add_argument("--restore", action="store_true", help="move archived runs back to their tables")
    parser.set_defaults(func=run)
