"""All-or-none rows: stage a dumped row in every format, then commit all or take all back.

The formats that cannot stage get the row only after the staged ones committed it.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Optional, Tuple

from RLA.logger.formats.base import KVWriter, StagedRow

FormatRow = Tuple[KVWriter, Dict[str, Any]]


def row_for(writer: KVWriter, row: Dict[str, Any], excluded: Dict[str, Tuple[str, ...]]) -> Dict[str, Any]:
    """``row`` without the keys whose ``exclude`` names ``writer``."""
    if not excluded:
        return row
    name = writer.name
    return {k: v for k, v in row.items() if name not in excluded.get(k, ())}


def stage_all(rows: List[FormatRow], step: int) -> List[FormatRow]:
    """Stage each format's row, then commit every staged row, or roll all back and raise.

    A reader then sees the row in every format that stages (csv, json, log) or in none:
    when one format fails (a full disk), the rows the others already appended are cut off
    again before the error leaves. Commits need no new disk space (a no-op, or the rename
    of a file written to a temp while staging).

    Args:
        rows: each format with the row it receives (keys excluded for it removed).
        step: the row's time-step.

    Returns:
        The formats that cannot stage (``stage`` returned ``None``), with their rows: the
        caller writes them only now that the staged formats hold the row.
    """
    staged: List[StagedRow] = []
    later: List[FormatRow] = []
    try:
        for writer, kvs in rows:
            one = writer.stage(kvs, step)
            if one is None:
                later.append((writer, kvs))
            else:
                staged.append(one)
        for one in staged:
            one.commit()
    except BaseException:
        for one in reversed(staged):
            with contextlib.suppress(Exception):  # keep the original error; undo the others
                one.rollback()
        raise
    return later


def write_later(later: List[FormatRow], step: int) -> None:
    """Write the rows of the formats that cannot stage; every one is tried, the first error raised."""
    first_error: Optional[BaseException] = None
    for writer, kvs in later:
        try:
            writer.write(kvs, step)
        except Exception as exc:  # noqa: BLE001 - other formats still get the row
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
