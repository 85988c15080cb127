"""``rla tag RUN TAG...``: add (or ``--remove``) tags of a run; ``rla tag RUN`` lists them."""

from __future__ import annotations

import argparse

from rla_scripts.commands._common import add_one_run, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from RLA.annotations import add_tags, read_annotations, remove_tags
    from RLA.layout import find_run

    data_root = resolve_data_root(args.data_root)
    layout = find_run(data_root, args.run, task=args.task, archived=args.archived)
    if args.tags:
        result = remove_tags(layout, args.tags) if args.remove else add_tags(layout, args.tags)
    else:
        result = read_annotations(layout)
    print(f"{layout.index}: {' '.join(result.tags) if result.tags else '(no tags)'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tag",
        help="tag a run (stored with its logs)",
        description="Add tags to a run (or remove them with --remove); "
        "without TAG, list its tags. Tags live in the run's "
        "log folder (annotations.json) and show on the dashboard.",
    )
    add_one_run(parser)
    parser.add_argument("tags", metavar="TAG", nargs="*", help="tags: letters, digits, _ - . : + @")
    parser.add_argument("--remove", action="store_true", help="remove the tags instead of adding them")
    parser.set_defaults(func=run)
