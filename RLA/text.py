"""Counted nouns in text printed to users: ``1 run``, ``2 runs``, ``1 entry``, ``3 entries``."""

from __future__ import annotations

from typing import Optional


def plural(n: float, singular: str, plural_form: Optional[str] = None) -> str:
    """The noun alone, in the form ``n`` needs: ``singular`` for exactly 1, else the plural.

    Args:
        n: how many.
        singular: the noun for one (``"run"``, ``"data type"``).
        plural_form: the noun for any other count; ``singular + "s"`` when omitted, so give it
            for irregular words (``"entries"``, ``"indices"``).

    Returns:
        ``singular`` when ``n == 1``, otherwise the plural (0 takes the plural: "0 runs").
    """
    if n == 1:
        return singular
    return plural_form if plural_form is not None else singular + "s"


def count(n: int, singular: str, plural_form: Optional[str] = None) -> str:
    """``n`` followed by the noun in the form it needs.

    Example::

        >>> count(1, "run"), count(2, "run"), count(0, "entry", "entries")
        ('1 run', '2 runs', '0 entries')
    """
    return f"{n} {plural(n, singular, plural_form)}"
