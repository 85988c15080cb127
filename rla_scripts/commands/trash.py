"""``rla trash list|restore|empty``: what ``rla delete`` moved to ``<data_root>/.trash/``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List

from RLA.text import count
from rla_scripts.commands._common import (
    add_change_options,
    add_data_root,
    check_selection_args,
    confirm,
    finish_interrupted,
    resolve_data_root,
    run_plan,
)


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _rows(args: argparse.Namespace) -> List[Dict[str, Any]]:
    from RLA.ops.trash import find_trashed, list_trash

    data_root = resolve_data_root(args.data_root)
    if args.runs or args.stamp:
        items = find_trashed(data_root, args.runs, task=args.task, stamp=args.stamp)
    else:
        items = list_trash(data_root, task=args.task)
    rows = []
    for item in items:
        when = item.deleted_at
        rows.append(
            {
                "stamp": item.stamp,
                "deleted": when.isoformat(sep=" ") if when else None,
                "index": item.index,
                "archived": item.layout.archived,
                "data_types": list(item.data_types),
                "size": item.size(),
                "exists_again": bool(item.home(data_root).existing_paths()),
            }
        )
    return rows


def _list(args: argparse.Namespace) -> int:
    from RLA.terminal import escape

    check_selection_args(args)
    rows = _rows(args)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = "  (exists again: restore refuses)" if row["exists_again"] else ""
        print(
            escape(
                f"{row['deleted'] or '-':<19}  {('arc/' if row['archived'] else '') + row['index']}  "
                f"{', '.join(row['data_types'])}  {_human(row['size'])}  from .trash/{row['stamp']}{state}"
            )
        )
    total = sum(row["size"] for row in rows)
    print(
        f"{count(len(rows), 'run')} in the trash ({_human(total)})"
        + (
            "; `rla trash restore RUN` brings one back, `rla trash empty` removes them for good"
            if rows
            else ""
        )
    )
    return 0


def _restore(args: argparse.Namespace) -> int:
    from RLA.errors import RLAError
    from RLA.ops.trash import find_trashed, plan_restore

    check_selection_args(args)
    if not (args.runs or args.task or args.stamp):
        raise RLAError(
            "No runs named",
            expected="RUN arguments, --task or --from STAMP",
            found="no selector",
            fix="`rla trash list` shows the trashed runs; `rla trash restore --from STAMP` undoes one delete",
        )
    data_root = resolve_data_root(args.data_root)
    finish_interrupted(data_root, args)
    plan = plan_restore(data_root, find_trashed(data_root, args.runs, task=args.task, stamp=args.stamp))
    return run_plan(plan, args, "restore")


def _empty(args: argparse.Namespace) -> int:
    from RLA.ops.trash_empty import plan_empty

    data_root = resolve_data_root(args.data_root)
    plan = plan_empty(data_root, older_than=args.older_than)
    print(plan.describe())
    if args.dry_run:
        print("dry run: nothing changed")
        return 0
    if not plan.folders:
        print("nothing to remove")
        return 0
    if not confirm(
        f"remove {count(len(plan.folders), 'trash folder')} for good (this cannot be undone)?", args
    ):
        print("aborted: nothing changed")
        return 1
    removed = plan.apply()
    for line in plan.recovery.lines() if plan.recovery else []:
        print(line, file=sys.stderr)
    print(f"empty: {count(len(removed), 'trash folder')} removed")
    return 0


def _selection(sub: argparse.ArgumentParser) -> None:
    add_data_root(sub)
    sub.add_argument(
        "runs", nargs="*", metavar="RUN", help="run index or a unique prefix/glob of YYYY/MM/DD/<name>"
    )
    sub.add_argument("--task", "--task_table_name", dest="task", help="task (table) name")
    sub.add_argument(
        "--from",
        dest="stamp",
        metavar="STAMP",
        help="the trash folder (one delete) to look in, as `rla trash list` shows it",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trash",
        help="list, restore or empty the trash of deleted runs",
        description="`rla delete` moves runs to <data_root>/.trash/<stamp>/ (one "
        "folder per delete). list shows them, restore moves runs back "
        "(all data types together, journaled like archive), empty removes "
        "them for good (`rla delete --purge` never goes through the trash).",
    )
    actions = parser.add_subparsers(dest="trash_action", metavar="ACTION")
    listing = actions.add_parser("list", help="the runs in the trash, oldest deletion first")
    _selection(listing)
    listing.add_argument("--format", choices=("table", "json"), default="table")
    listing.set_defaults(func=_list)
    restore = actions.add_parser("restore", help="move trashed runs back (refuses a run that exists again)")
    _selection(restore)
    add_change_options(restore)
    restore.set_defaults(func=_restore)
    empty = actions.add_parser("empty", help="remove the trash for good (asks first; --yes)")
    add_data_root(empty)
    empty.add_argument(
        "--older-than", type=float, metavar="DAYS", help="only what was deleted more than DAYS days ago"
    )
    add_change_options(empty)
    empty.set_defaults(func=_empty)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
