"""``rla fsck``: report what interrupted operations left in a data root; ``--repair`` fixes it."""

from __future__ import annotations

import argparse

from rla_scripts.commands._common import add_data_root, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from RLA.ops.fsck import repair, scan
    from RLA.terminal import escape

    data_root = resolve_data_root(args.data_root)
    report = repair(data_root) if args.repair else scan(data_root)
    for line in report.repaired:
        print(f"repaired: {escape(line)}")
    for finding in report.findings:
        print(escape(finding.line()))
    kinds = sorted({finding.kind for finding in report.findings})
    if not report.findings:
        print(f"{data_root}: clean (no pending journal, fragment, split run or partial copy)")
        return 0
    counts = ", ".join(f"{len(report.of(kind))} {kind}" for kind in kinds)
    hint = "" if args.repair else "; `rla fsck --repair` finishes journals and removes partial copies"
    print(f"{data_root}: {counts}{hint}")
    return 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fsck",
        help="check the data root for interrupted operations and fragments",
        description="Report pending journals of interrupted delete/archive/migrate "
        "operations, run fragments (a run without log/), runs split "
        "between places and partial copies. --repair finishes the "
        "journals and removes partial copies; fragments and split runs "
        "are only reported (never deleted).",
    )
    add_data_root(parser)
    parser.add_argument(
        "--repair", action="store_true", help="finish interrupted operations and remove partial copies"
    )
    parser.set_defaults(func=run)
