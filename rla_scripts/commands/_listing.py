"""``rla list``'s habits: the order of the runs, an empty database, the table on a terminal."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence

from RLA.errors import QueryError, RunNotFoundError

#: The default order: newest first (runs without a start time last).
NEWEST_FIRST = "-start_time"


def sort_runs(frame: Any, spec: Optional[str]) -> Any:
    """``frame`` sorted by ``spec``: comma-separated columns, ``-col`` descending; default
    newest first. Ties keep the index order.

    Raises:
        QueryError: a column the frame does not have.
    """
    keys: List[str] = []
    ascending: List[bool] = []
    for part in (spec or NEWEST_FIRST).split(","):
        part = part.strip()
        if not part:
            continue
        key = part[1:] if part.startswith("-") else part
        if key not in frame.columns:
            raise QueryError(
                f"Cannot sort by {key!r}",
                expected="a column name (-name: descending)",
                found=repr(key),
                fix="use a column of `rla list --format csv`",
            )
        keys.append(key)
        ascending.append(not part.startswith("-"))
    if not keys or frame.empty:
        return frame
    try:  # a hyper-parameter named index may hold numbers beside the runs' texts
        frame = frame.sort_values("index", kind="stable")
    except TypeError:
        frame = frame.sort_values("index", kind="stable", key=lambda column: column.astype(str))
    try:
        return frame.sort_values(keys, ascending=ascending, kind="stable", na_position="last")
    except TypeError:  # values of mixed types (2 and 'a'): compare them as text
        return frame.sort_values(
            keys,
            ascending=ascending,
            kind="stable",
            na_position="last",
            key=lambda column: column.astype(str),
        )


def has_no_runs(data_root: Path, archived: Optional[bool]) -> bool:
    """Whether the data root holds no run at all in the scope listed (a new database)."""
    if not data_root.is_dir():
        return True
    from RLA.query.tree import discover

    return not discover(data_root, None, archived)


def select_or_nothing(args: argparse.Namespace, data_root: Path, archived: Optional[bool]) -> Any:
    """The selection of ``rla list``; ``None`` for a new or empty data root (0 runs, no
    error), whatever the filters. Errors on a database that has runs are raised."""
    from rla_scripts.commands._common import require_runs, select

    if not data_root.is_dir():
        return None
    try:
        selection = select(args, data_root, archived=archived, include_broken=args.include_broken)
        require_runs(selection, args, data_root)
    except (RunNotFoundError, QueryError):
        if has_no_runs(data_root, archived):
            return None
        raise
    return selection


def terminal_width(asked: Optional[int]) -> int:
    """``--width`` if given (0: no limit), else ``$COLUMNS``, else the terminal's width when
    the output is a terminal, else no limit (``rla list | grep`` sees every column)."""
    import os

    if asked is not None:
        return max(0, asked)
    if not os.environ.get("COLUMNS", "").strip().isdigit() and not sys.stdout.isatty():
        return 0
    return shutil.get_terminal_size((80, 24)).columns


def print_table(
    frame: Any, columns: Sequence[str], important: Sequence[str], width: int, footer: str, explicit: bool
) -> None:
    """Print the runs' table (columns empty for every shown run left out unless asked for by
    ``--columns``), then ``footer`` and a note naming the columns that did not fit."""
    from RLA.query.table import empty_columns, render_table
    from RLA.terminal import escape

    if frame.empty:
        print(footer)
        return
    shown = (
        list(columns)
        if explicit
        else [c for c in columns if c == "index" or c not in empty_columns(frame, [c])]
    )
    table = render_table(frame[shown], width, priority=important, escape=escape)
    print(table.text)
    if table.hidden:
        hidden = ", ".join(escape(c) for c in table.hidden)
        footer += (
            f" ({len(table.hidden)} column{'s' if len(table.hidden) > 1 else ''} not shown to fit "
            f"{width} characters: {hidden}; see --columns, --width 0 or --format csv)"
        )
    print(footer)


def note_new_root(data_root: Path) -> None:
    """Say on stderr why a listing is empty."""
    from RLA.terminal import escape

    state = "does not exist yet" if not data_root.exists() else "has no runs yet"
    print(f"note: the data root {escape(data_root)} {state}", file=sys.stderr)


def importance(columns: Sequence[str]) -> List[str]:
    """``columns`` from the most to the least important: the index, the metrics asked for,
    the status, the hyper-parameters; the start time and the host go first when space runs out."""
    last = [c for c in ("start_time", "host") if c in columns]
    metrics = [c for c in columns if c.endswith(")") and "(" in c]
    head = [c for c in ("index", *metrics, "status") if c in columns]
    return head + [c for c in columns if c not in head and c not in last] + last
