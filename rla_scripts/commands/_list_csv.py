"""``rla list --format csv`` of a whole scope, streamed from the index (see :mod:`RLA.query.csv_stream`).

Taken when the listing has no filter and the default order (newest first), optionally with
``--task``, ``--archived``/``--all``, ``--columns``, ``--limit`` and ``--verify``, and the output is
not a terminal; everything else (and every case the stream cannot write exactly) goes through
the frame, which is the reference: both give the same bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

from rla_scripts.commands._common import bar, check_fragments, check_selection_args, report_skipped

#: Options that make the listing anything but the plain one.
_OTHER = (
    "where",
    "status",
    "since",
    "until",
    "regex",
    "runs",
    "sort",
    "group_by",
    "include_broken",
    "metrics",
)


def wanted(args: argparse.Namespace) -> bool:
    """Whether ``rla list`` asks for the plain CSV listing of a scope."""
    return (
        args.format == "csv" and not sys.stdout.isatty() and not any(getattr(args, o, None) for o in _OTHER)
    )


def stream(args: argparse.Namespace, data_root: Path, archived: Optional[bool]) -> bool:
    """Write the listing from the index; False (nothing written) when the frame must do it."""
    from RLA.query import Catalog
    from RLA.query.csv_stream import plan
    from RLA.query.csv_write import fragment_candidates, write

    if not data_root.is_dir():
        return False
    check_selection_args(args)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    with Catalog(data_root) as catalog:
        damaged = catalog.refresh(
            args.task, archived, progress=lambda items, n: bar(items, n, "indexing"), verify=bool(args.verify)
        )
        how = plan(catalog, args.task, archived, columns, args.limit or None)
        if how is None:
            return False
        skipped = [(catalog_index(catalog, key), "; ".join(damaged[key].problems)) for key in sorted(damaged)]
        skipped += [
            (
                path,
                "folder name is not valid UTF-8 (copied from a machine with another locale?); rename it to list it",
            )
            for path in catalog.undecodable
        ]
        report_skipped(skipped)
        check_fragments(fragment_candidates(catalog, args.task, archived), data_root)
        write(how, catalog, sys.stdout)
    return True


def catalog_index(catalog: object, key: str) -> str:
    """The run index of a catalog key."""
    from RLA.query.tree import layout_of

    return layout_of(catalog.data_root, key).index  # type: ignore[attr-defined]
