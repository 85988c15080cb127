"""The human-readable table both ``stdout`` and ``log`` print at every dump."""
from __future__ import annotations

from typing import Any, List, Mapping

#: Longer cell texts are cut to this many characters (ending in ``...``).
MAX_CELL = 80


def _cell(value: Any) -> str:
    if type(value) is float:
        text = "%-8.3g" % value
    elif value is None:
        text = ""
    else:
        text = str(value)
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 3] + "..."
    return text.replace("\n", "\\n")


def render_table(kvs: Mapping[str, Any]) -> str:
    """Render one row as an ASCII table, keys sorted case-insensitively.

    Returns:
        The table (ending in a newline), or ``""`` for an empty row.
    """
    if not kvs:
        return ""
    keys = sorted(kvs, key=str.lower)
    texts = [_cell(kvs[k]) for k in keys]
    key_width = max(map(len, keys))
    val_width = max(map(len, texts))
    dashes = "-" * (key_width + val_width + 7)
    lines: List[str] = [dashes]
    for key, text in zip(keys, texts):
        lines.append(f"| {key.ljust(key_width)} | {text.ljust(val_width)} |")
    lines.append(dashes)
    lines.append("")
    return "\n".join(lines)
