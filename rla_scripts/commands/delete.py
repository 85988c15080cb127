"""``rla delete``: move every data type of the selected runs to the trash (``--purge``: for good)."""

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
    from RLA.ops import plan_delete

    check_selection_args(args)
    if not has_selector(args) and args.max_time_step is None:
        raise RLAError(
            "No runs named",
            expected="RUN arguments or --task/--regex/--where filters",
            found="no selector",
            fix="name the runs to delete; deleting everything needs --regex '*'",
        )
    if args.max_time_step is not None:
        bound = f"time_step <= {float(args.max_time_step)!r}"
        args.where = f"({args.where}) and {bound}" if args.where else bound
    data_root = resolve_data_root(args.data_root)
    finish_interrupted(data_root, args)
    rows = require_runs(select(args, data_root, archived=args.archived, include_broken=True), args, data_root)
    plan = plan_delete(data_root, [row.layout for row in rows], purge=args.purge)
    return run_plan(plan, args, "purge" if args.purge else "delete")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "delete",
        help="delete runs (to .trash/, or --purge)",
        description="Move every data type of the selected runs to "
        "<data_root>/.trash/ (or remove them with --purge). Never "
        "touches anything outside the data root.",
    )
    add_selection(parser)
    add_change_options(parser)
    parser.add_argument("--purge", action="store_true", help="delete permanently instead of to the trash")
    parser.add_argument(
        "--max-time-step",
        type=float,
        metavar="N",
        help="only runs whose largest time-step is <= N (the original's small_ts filter)",
    )
    parser.add_argument("--archived", action="store_true", help="delete archived runs (under arc/)")
    parser.set_defaults(func=run)
