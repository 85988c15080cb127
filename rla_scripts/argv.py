"""Command-line words argparse would misread: option values that start with ``-``.

``rla list --sort -seed`` (descending by seed) reads to argparse as the option ``-seed``,
so ``--sort`` "expected one argument". :func:`glue_dash_values` rewrites such a pair into
``--sort=-seed`` before parsing; ``--sort=-seed`` itself is left as it is.
"""

from __future__ import annotations

from typing import List, Sequence

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
