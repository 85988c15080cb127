"""The human-readable table both ``stdout`` and ``log`` print at every dump."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple

#: Longer cell texts are cut to this many characters (ending in ``...``).
MAX_CELL = 80


def _cell(value: Any) -> str:
    if type(value) is float:
        return "%-8.3g" % value
    text = "" if value is None else str(value)
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 3] + "..."
    return text.replace("\n", "\\n")


class TableRenderer:
    """Render rows as ASCII tables, keys sorted case-insensitively.

    The sorted key order and padded key column are cached per key set, since
    consecutive dumps almost always have the same keys.
    """

    def __init__(self) -> None:
        self._layouts: Dict[Tuple[str, ...], Tuple[List[str], List[str]]] = {}

    def _layout(self, kvs: Mapping[str, Any]) -> Tuple[List[str], List[str]]:
        signature = tuple(kvs)
        layout = self._layouts.get(signature)
        if layout is None:
            keys = sorted(kvs, key=str.lower)
            width = max(map(len, keys))
            layout = (keys, ["| " + k.ljust(width) + " | " for k in keys])
            if len(self._layouts) > 64:  # key sets that keep changing: do not grow forever
                self._layouts.clear()
            self._layouts[signature] = layout
        return layout

    def __call__(self, kvs: Mapping[str, Any]) -> str:
        """The table for ``kvs`` (ending in a newline), or ``""`` for an empty row."""
        if not kvs:
            return ""
        keys, heads = self._layout(kvs)
        texts = ["%-8.3g" % v if type(v) is float else _cell(v) for v in map(kvs.__getitem__, keys)]
        val_width = max(map(len, texts))
        dashes = "-" * (len(heads[0]) + val_width + 2)
        lines = [dashes]
        lines += [head + text.ljust(val_width) + " |" for head, text in zip(heads, texts)]
        lines.append(dashes)
        lines.append("")
        return "\n".join(lines)


def render_table(kvs: Mapping[str, Any]) -> str:
    """Render one row as an ASCII table (uncached; see :class:`TableRenderer`)."""
    return TableRenderer()(kvs)
