"""``rla list --format csv`` of a whole scope, streamed from the index (see :mod:`RLA.query.csv_stream`).

Taken when the listing has no filter but ``--where`` and the default order (newest first),
optionally with ``--task``, ``--archived``/``--all``, ``--columns``, ``--limit`` and ``--verify``, and
the output is not a terminal; everything else (and every case the stream cannot write exactly)
goes through the frame, which is the reference: both give the same bytes. With ``--where`` the
runs are selected in SQL (:func:`RLA.query.pushdown.matching_keys`) and only they are listed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from rla_scripts.commands._common import bar, check_fragments, check_selection_args, report_skipped

#: Options that make the listing anything but the plain one.
_OTHER = (
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
        keys = _selected(catalog, args, archived, damaged) if args.where else None
        if keys is not None and not keys:
            return False  # no run matches: the frame path says why
        where = ("key IN (SELECT value FROM json_each(?))", [json.dumps(keys)]) if keys else None
        how = plan(catalog, args.task, archived, columns, args.limit or None, where)
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
        if keys is None:
            check_fragments(fragment_candidates(catalog, args.task, archived), data_root)
        else:  # as the frame path: the selected runs only
            check_fragments(_selected_rows(catalog, keys), data_root)
        write(how, catalog, sys.stdout)
    return True


def _selected(catalog: Any, args: argparse.Namespace, archived: Optional[bool], damaged: Dict) -> List[str]:
    """The keys ``--where`` selects; empty when the frame path must answer (no match, or an
    error it reports: an unknown name, a bad expression)."""
    from RLA.errors import QueryError
    from RLA.query.expr import parse_query
    from RLA.query.names import check_query_names
    from RLA.query.pushdown import matching_keys

    try:
        query = parse_query(args.where)
        check_query_names(catalog, query, args.task, archived, damaged.values())
    except QueryError:
        return []
    return matching_keys(catalog, args.task, archived, query)


def _selected_rows(catalog: Any, keys: List[str]) -> Iterator[Tuple[bool, str, bool, str]]:
    """``(archived, relative path, has run.json, index)`` of the runs of ``keys``, in key order."""
    sql = "SELECT key, idx, status != 'unknown' FROM runs WHERE key IN (SELECT value FROM json_each(?)) ORDER BY key"
    for key, index, has_info in catalog.conn.execute(sql, (json.dumps(keys),)):
        flag = key.startswith("arc:")
        yield flag, key[4:] if flag else key, bool(has_info), index


def catalog_index(catalog: object, key: str) -> str:
    """The run index of a catalog key."""
    from RLA.query.tree import layout_of

    return layout_of(catalog.data_root, key).index  # type: ignore[attr-defined]
