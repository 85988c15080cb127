"""The original project's scripts (``archive_expt.py``, ``delete_expt.py``, ``view_expt.py``):
their options, and their translation into an ``rla`` command line."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, List, Optional

from RLA.errors import RLAError


def legacy_parser(description: str) -> argparse.ArgumentParser:
    """The original scripts' options, plus ``--data_root`` (default: ``DATA_ROOT`` of a ``config.py``
    / ``rla_script_config.py`` in the current folder, the original's convention)."""
    from rla_scripts.script_config import config_data_root

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--data_root",
        "--data-root",
        dest="data_root",
        default=config_data_root(),
        help="database root (default: DATA_ROOT of ./config.py or ./rla_script_config.py, "
        "else $RLA_DATA_ROOT or the nearest rla_config.yaml)",
    )
    parser.add_argument("--task_table_name", "--task", dest="task", default=None)
    parser.add_argument("--regex", default=None, help="glob on YYYY/MM/DD/<name>")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask")
    parser.add_argument("--dry-run", action="store_true")
    return parser


def run_legacy(
    build: Callable[[argparse.Namespace], List[str]],
    parser: argparse.ArgumentParser,
    argv: Optional[List[str]] = None,
) -> int:
    """Translate the original options into an ``rla`` command line and run it."""
    from rla_scripts.cli import main

    args = parser.parse_args(argv)
    try:
        command = build(args)
    except RLAError as exc:
        from RLA.terminal import escape

        print(f"error: {escape(exc)}", file=sys.stderr)
        return exc.exit_code
    if args.data_root:
        command += ["--data-root", args.data_root]
    if args.yes:
        command.append("--yes")
    if args.dry_run:
        command.append("--dry-run")
    return main(command)


def selection_args(args: argparse.Namespace) -> List[str]:
    """``--task``/``--regex`` for the rla command line."""
    out: List[str] = []
    if args.task:
        out += ["--task", args.task]
    if args.regex:
        out += ["--regex", args.regex]
    return out
