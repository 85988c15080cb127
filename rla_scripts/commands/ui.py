"""``rla ui``: start the local web dashboard and print its URL."""

from __future__ import annotations

import argparse

from rla_scripts.commands._common import add_data_root, resolve_data_root


def run(args: argparse.Namespace) -> int:
    from RLA.ui.server import plan_server, require_starlette, serve

    require_starlette()
    data_root = resolve_data_root(args.data_root)
    read_only = True if args.read_only else (False if args.allow_actions else None)
    plan = plan_server(args.host, args.port, read_only, args.token)
    if plan.token and not args.token:
        print("Off loopback every request needs this token (printed once): open the URL below.")
    serve(data_root, plan, open_browser=args.open)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ui",
        help="web dashboard (runs, charts, compare)",
        description="Serve a local web dashboard of the database: the runs "
        "table with the where filter, run pages, grouped charts, "
        "compare and actions. Listens on 127.0.0.1 by default; any "
        "other address requires a token on every request and is "
        "read-only unless --allow-actions is given.",
    )
    add_data_root(parser)
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; another address is read-only and requires a token)",
    )
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="refuse archive/delete/restore/tag/note (the default off loopback)",
    )
    parser.add_argument(
        "--allow-actions",
        action="store_true",
        help="off loopback: allow the actions anyway (token holders may archive/delete)",
    )
    parser.add_argument("--token", help="token required off loopback (default: a random one, printed)")
    parser.add_argument("--open", action="store_true", help="open the dashboard in the web browser")
    parser.set_defaults(func=run)
