"""Make text from outside (run names, hyper-parameter values, file contents) safe to print.

A run that arrived by a pull can carry escape sequences in its name or values: ``ESC [ 2 J``
clears the screen, ``ESC ] ... BEL`` sets the window title or writes the clipboard on some
terminals, ``\\r`` overwrites a line so a warning vanishes, a right-to-left override
(U+202E) shows a name reversed. :func:`escape` rewrites every such character as visible
text (``\\x1b``, ``\\r``, ``\\u202e``); printable text, Unicode letters included, is left
as it is, so plain names print unchanged.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls (tab and newline included: they break table rows and can fake a line),
# DEL, C1 controls (0x9b is a one-byte CSI on some terminals), the Unicode line and
# paragraph separators, the bidirectional formatting characters, and surrogates: a name
# made of undecodable bytes arrives as U+DC80-U+DCFF and would print back as the raw byte.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: "re.Match[str]") -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the undecodable byte code - 0xDC00
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(value: Any) -> str:
    """``str(value)`` with control, escape and bidi-override characters made visible.

    Example::

        >>> escape("run\\x1b[2Jname")
        'run\\\\x1b[2Jname'
    """
    text = value if isinstance(value, str) else str(value)
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_visible, text)


def escape_lines(text: str) -> str:
    """Escape each line of a multi-line text, keeping its line breaks (for rendered views)."""
    return "\n".join(escape(line) for line in text.split("\n"))


def caret_block(text: str, offset: int) -> str:
    """``text`` (escaped) on its own line, then ``^`` under the character at the 0-based ``offset``.

    The column is counted on the escaped text, so the caret stays under the right character
    when the text holds control characters.
    """
    offset = max(0, min(offset, len(text)))
    return f"\n    {escape(text)}\n    {' ' * len(escape(text[:offset]))}^"


def render_error(error: BaseException) -> str:
    """An error's message safe for a terminal: every value escaped, its own caret lines kept.

    An :class:`~RLA.errors.RLAError` whose ``found`` was built by :func:`caret_block` (it sets
    ``found_is_caret``) keeps that block's two line breaks; everything else, including line
    breaks inside names and values from outside, is escaped as by :func:`escape`.
    """
    from RLA.errors import RLAError, describe

    if not (isinstance(error, RLAError) and getattr(error, "found_is_caret", False)):
        return escape(error)
    parts = (error.expected, error.fix)
    expected, fix = (None if part is None else escape(part) for part in parts)
    return describe(escape(error.problem), expected, error.found, fix)
