"""``rla note RUN [TEXT]``: set (or show, or ``--clear``) the note of a run."""

from __future__ import annotations

import argparse

from rla_scripts.commands._common import add_one_run, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from RLA.annotations import read_annotations, set_note
    from RLA.layout import find_run

    data_root = resolve_data_root(args.data_root)
    layout = find_run(data_root, args.run, task=args.task, archived=args.archived)
    if args.clear:
        set_note(layout, "")
    elif args.text is not None:
        set_note(layout, args.text)
    note = read_annotations(layout).note
    print(note if note else f"{layout.index}: (no note)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "note",
        help="write a note on a run (stored with its logs)",
        description="Set the note of a run (replacing the old one); without "
        "TEXT, print it. Stored in the run's annotations.json.",
    )
    add_one_run(parser)
    parser.add_argument("text", metavar="TEXT", nargs="?", help="the note")
    parser.add_argument("--clear", action="store_true", help="remove the note")
    parser.set_defaults(func=run)
