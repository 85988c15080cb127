"""Command-line words argparse would misread: option values that start with ``-``.

``rla list --sort -seed`` (descending by seed) reads to argparse as the option ``-seed``,
so ``--sort`` "expected one argument". :func:`glue_dash_values` rewrites such a pair into
``--sort=-seed`` before parsing; ``--sort=-seed`` itself is left as it is.
"""

from __future__ import annotations

import argparse
from typing import Iterable, List, Sequence

#: Options whose value may start with ``-`` (a leading ``-`` means descending).
DASH_VALUE_OPTIONS = ("--sort",)


def _is_dash_value(word: str) -> bool:
    """``-seed`` or ``-last(return),algo``: one dash then a name; not ``--x``, ``-h`` or ``-``."""
    return len(word) > 1 and word[0] == "-" and word[1] != "-" and word != "-h"


def glue_dash_values(argv: Sequence[str], options: Sequence[str] = DASH_VALUE_OPTIONS) -> List[str]:
    """``argv`` with ``OPTION -value`` written as ``OPTION=-value`` for each of ``options``.

    Words after a bare ``--`` (positional only) are left alone.
    """
    out: List[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            out.extend(words[i:])
            break
        if word in options and i + 1 < len(words) and _is_dash_value(words[i + 1]):
            out.append(f"{word}={words[i + 1]}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def keep_parent_values(parser: argparse.ArgumentParser, inherited: Iterable[str] = ()) -> None:
    """Let an option given before a sub-command survive the sub-command's own copy of it.

    ``rla index --data-root X rebuild``: argparse parses ``rebuild``'s options into a fresh
    namespace and copies every attribute back, so the sub-command's default (None) overwrote
    X. Every option a sub-parser shares (same ``dest``) with a parser above it gets the
    default ``SUPPRESS`` in the sub-parser: set only when written after the sub-command, so
    the value (or default) from above stays otherwise. Walks the whole tree.
    """
    own = {action.dest for action in parser._actions if action.option_strings} | set(inherited)
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for child in set(action.choices.values()):
            for item in child._actions:
                if item.option_strings and item.dest in own and item.dest != "help":
                    item.default = argparse.SUPPRESS
            keep_parent_values(child, own)
