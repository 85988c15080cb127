"""Terminal tables of runs: readable cells, empty columns left out, the width of the terminal.

``rla list`` prints its table through :func:`render_table`: times without microseconds,
numbers in at most 6 significant digits, ``-`` for a missing cell, long text cut with
``…``, and columns dropped (least important first) until the table fits the width; the
caller names what was dropped in a note.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

#: How a missing cell is shown.
MISSING = "-"
#: Times are shown to the second.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: Text cells longer than this are cut (the first column, the run index, never is).
MAX_CELL = 40
GAP = "  "
ELLIPSIS = "…"


def is_missing(value: Any) -> bool:
    """``None``, NaN, NaT or an empty string."""
    if value is None or (isinstance(value, str) and value == ""):
        return True
    if isinstance(value, float):
        return math.isnan(value)
    try:
        import pandas as pd

        return bool(pd.isna(value)) if not isinstance(value, (list, tuple, dict, set)) else False
    except (TypeError, ValueError):
        return False


def empty_columns(frame: Any, columns: Optional[Sequence[str]] = None) -> List[str]:
    """The columns (of ``columns``, default all) whose every cell is missing."""
    names = list(frame.columns if columns is None else columns)
    return [name for name in names if all(is_missing(v) for v in frame[name].tolist())]


def cell_text(value: Any) -> str:
    """A cell as text: times to the second, floats in 6 significant digits, ``-`` if missing."""
    if is_missing(value):
        return MISSING
    if isinstance(value, _dt.datetime):  # pandas' Timestamp too
        return value.strftime(TIME_FORMAT)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if hasattr(value, "dtype") and hasattr(value, "item"):  # numpy scalars
        return cell_text(value.item())
    return str(value)


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters (``…`` marks a cut)."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + ELLIPSIS if width > 0 else ""


@dataclass
class Table:
    """A rendered table and the columns it left out to fit."""

    text: str
    hidden: List[str] = field(default_factory=list)


def _fit(widths: Dict[str, int], order: List[str], width: int) -> List[str]:
    """The columns kept within ``width``: the first always, then each in ``order`` (most
    important first) that still fits in what is left."""
    kept = order[:1]
    used = sum(widths[c] for c in kept)
    for name in order[1:]:
        if used + len(GAP) + widths[name] <= width:
            kept.append(name)
            used += len(GAP) + widths[name]
    return kept


def render_table(
    frame: Any,
    width: Optional[int] = None,
    priority: Optional[Sequence[str]] = None,
    escape: Callable[[str], str] = str,
) -> Table:
    """Render ``frame`` (every column, in its order) as aligned text.

    Args:
        frame: the rows and columns to show; the first (the run index) is never cut.
        width: the most characters per line (``None`` or ``0``: no limit).
        priority: columns from the most to the least important; columns not named come
            after them (rightmost first to go). The first column is the last one dropped.
        escape: applied to every header and cell (e.g. :func:`RLA.terminal.escape`).

    Returns:
        The text (no trailing newline) and the columns dropped to fit ``width``.
    """
    import pandas as pd

    names = [str(c) for c in frame.columns]
    cells = {name: [escape(cell_text(v)) for v in frame.iloc[:, i].tolist()] for i, name in enumerate(names)}
    for name in names[1:]:
        cells[name] = [cut(text, MAX_CELL) for text in cells[name]]
    headers = {name: escape(name) for name in names}
    widths = {name: max([len(headers[name])] + [len(t) for t in cells[name]]) for name in names}
    ranked = [n for n in (priority or []) if n in cells]
    ranked += [n for n in names if n not in ranked]
    if names:
        ranked.remove(names[0])
        ranked.insert(0, names[0])
    kept = set(_fit(widths, ranked, width)) if width else set(names)
    shown = [n for n in names if n in kept]  # the first column stays whole, even wider than ``width``
    right = {
        n
        for i, n in enumerate(names)
        if pd.api.types.is_numeric_dtype(frame.dtypes.iloc[i])
        and not pd.api.types.is_bool_dtype(frame.dtypes.iloc[i])
    }

    def line(texts: Dict[str, str]) -> str:
        parts = [texts[n].rjust(widths[n]) if n in right else texts[n].ljust(widths[n]) for n in shown]
        return GAP.join(parts).rstrip()

    lines = [line(headers)] + [line({n: cells[n][r] for n in shown}) for r in range(len(frame))]
    return Table("\n".join(lines), [n for n in names if n not in kept])


def count_text(count: int, noun: str = "run") -> str:
    """``0 runs``, ``1 run``, ``2 runs``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
