"""The ``rla`` command line: dispatches to one module per sub-command."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from RLA.errors import RLAError
from rla_scripts.commands import COMMAND_MODULES


def build_parser() -> argparse.ArgumentParser:
    """Build the ``rla`` parser with every available sub-command."""
    parser = argparse.ArgumentParser(
        prog="rla",
        description="Manage the RLA experiment database (list, view, archive, "
        "delete, plot, sync, replay-buffer snapshots).",
    )
    from RLA.version import __version__

    parser.add_argument("--version", action="version", version=f"rla {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"rla_scripts.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"rla_scripts.commands.{name}":
                continue  # command not built yet
            raise
        module.register(subparsers)
    from rla_scripts.argv import keep_parent_values

    keep_parent_values(parser)  # rla index --data-root X rebuild keeps X
    return parser


def main(argv: Optional[List[str]] = None, parser: Optional[argparse.ArgumentParser] = None) -> int:
    """Entry point of the ``rla`` console script; user errors print one line, no traceback.

    ``parser`` is one :func:`build_parser` made before (kill trials fork many commands from one).
    """
    from rla_scripts.argv import glue_dash_values

    parser = parser if parser is not None else build_parser()
    args = parser.parse_args(glue_dash_values(sys.argv[1:] if argv is None else argv))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below
    except RLAError as exc:
        from RLA.terminal import render_error  # the message may quote a run name or value from outside

        print(f"rla {args.command}: error: {render_error(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"rla {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`rla ... | head`): stop quietly
        from RLA.fs import silence_stdout

        silence_stdout()
        return 141
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
