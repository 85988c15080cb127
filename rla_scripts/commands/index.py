"""``rla index rebuild`` / ``rla index --verify``: rebuild the SQLite catalog, or check it against the tree."""

from __future__ import annotations

import argparse
import time

from RLA.text import count as counted
from rla_scripts.commands._common import add_data_root, bar, resolve_data_root


def rebuild(args: argparse.Namespace) -> int:
    from RLA.query import Catalog

    data_root = resolve_data_root(args.data_root)
    if args.dry_run:
        from RLA.query.tree import discover

        print(
            f"would rebuild {data_root / '.rla_index.sqlite'} from {counted(len(discover(data_root, archived=None)), 'run')}"
        )
        return 0
    start = time.perf_counter()
    with Catalog(data_root) as catalog:
        catalog.reset()  # a fresh file, even if the old one is corrupt
        count = catalog.rebuild(progress=lambda items, n: bar(items, n, "indexing"))
        where = "memory (data root not writable)" if catalog.in_memory else catalog.path
    print(f"indexed {counted(count, 'run')} in {time.perf_counter() - start:.2f}s -> {where}")
    return 0


def verify(args: argparse.Namespace) -> int:
    """List every folder and stat every run's files (active and archived), updating the index."""
    from RLA.query import Catalog

    data_root = resolve_data_root(args.data_root)
    start = time.perf_counter()
    with Catalog(data_root) as catalog:
        before = catalog.generation
        damaged = catalog.refresh(
            None, None, progress=lambda items, n: bar(items, n, "verifying"), verify=True
        )
        changed = catalog.generation != before
        count = catalog.count()
    print(
        f"verified {counted(count + len(damaged), 'run')} in {time.perf_counter() - start:.2f}s"
        + (" (index updated)" if changed else " (index was up to date)")
        + (f"; {len(damaged)} damaged (see rla list)" if damaged else "")
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index",
        help="manage the run catalog (index rebuild)",
        description="The catalog (.rla_index.sqlite) is a cache of the tree; "
        "it is refreshed automatically, `rebuild` starts it over, "
        "--verify checks every folder and run file now.",
    )
    add_data_root(parser)
    parser.add_argument(
        "--verify", action="store_true", help="check every folder and every run's files against the index now"
    )
    parser.set_defaults(
        func=lambda args: (
            verify(args)
            if args.verify
            else parser.error("choose an action: rla index rebuild, or rla index --verify")
        )
    )
    sub = parser.add_subparsers(dest="index_command", metavar="ACTION")
    sub.required = False
    build = sub.add_parser("rebuild", help="rebuild the catalog from the directory tree")
    add_data_root(build)
    build.add_argument("--dry-run", action="store_true", help="count the runs, change nothing")
    build.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry; never prompts")
    build.set_defaults(func=rebuild)
