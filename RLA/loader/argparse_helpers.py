"""argparse helpers of the original: ``boolean_flag`` and the loader's ``arg_parser_postprocess``."""

from __future__ import annotations

import argparse
from typing import Optional


def boolean_flag(
    parser: argparse.ArgumentParser, name: str, default: bool = False, help: Optional[str] = None
) -> None:
    """Add ``--name`` (sets True) and ``--no-name`` (sets False), both to ``dest=name`` with ``-`` -> ``_``."""
    dest = name.replace("-", "_")
    parser.add_argument("--" + name, action="store_true", default=default, dest=dest, help=help)
    parser.add_argument(
        "--no-" + name, action="store_false", dest=dest, help=f"disable --{name}" if help is None else None
    )


def arg_parser_postprocess(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the options :class:`RLA.loader.ExperimentLoader` reads from the hyper-parameters.

    ``--loaded_date`` (record date or index of the run to load, default ``''``: nothing is
    loaded), ``--loaded_task_name`` (default ``''``: the current task) and ``--info``.
    Unlike the original (``loaded_date`` defaulted to ``True`` and crashed the loader),
    the defaults mean "start fresh".
    """
    parser.add_argument(
        "--loaded_task_name", default="", type=str, help="task of the run to load (default: the current task)"
    )
    parser.add_argument("--info", default="default exp info", type=str, help="free text about this run")
    parser.add_argument(
        "--loaded_date",
        default="",
        type=str,
        help="record date (YYYY/MM/DD/HH-MM-SS-ffffff) or index of the run to resume/load",
    )
    return parser
