"""What the logger accepts as a key, a value and a total of time-steps (checked, or a LoggerError)."""

from __future__ import annotations

from typing import Any, Optional

from RLA.errors import LoggerError
from RLA.fs import plain


def normalize_value(val: Any) -> Any:
    """Turn numpy/torch scalars (0-d or one-element arrays) into python numbers
    (:func:`RLA.fs.plain`); leave anything else as is."""
    return plain(val)


def check_key(key: Any) -> None:
    """Raise :class:`LoggerError` unless ``key`` is a str without line breaks."""
    if type(key) is not str or "\n" in key or "\r" in key:
        raise LoggerError(
            "A logged key must be a string without line breaks",
            expected="a str such as 'perf/reward'",
            found=repr(key),
            fix="convert the key with str() and remove line breaks",
        )


def as_number(val: Any, key: str, what: str) -> float:
    """``val`` as a float for the averaging call ``what`` (a :class:`LoggerError` if it is not a number)."""
    try:
        return float(normalize_value(val))
    except (TypeError, ValueError):
        raise LoggerError(
            f"{what} needs numbers for {key!r}",
            expected="int or float",
            found=repr(val),
            fix="use logkv for non-numeric values",
        ) from None


def check_window(window: Any, key: str) -> int:
    """The moving-average ``window`` of ``key``: a positive int (a :class:`LoggerError` otherwise)."""
    if type(window) is not int or window < 1:
        raise LoggerError(
            f"ma_record_tabular({key!r}) needs a positive int window",
            expected="window >= 1",
            found=repr(window),
            fix="pass e.g. window=100",
        )
    return window


def check_total_steps(total: Any) -> Optional[int]:
    """``total`` as a positive int (numpy ints accepted), or ``None``.

    Raises:
        LoggerError: anything else (bools, floats, zero, negative numbers).
    """
    if total is None:
        return None
    value = normalize_value(total)
    if type(value) is not int or value < 1:
        raise LoggerError(
            "The total number of time-steps must be a positive int",
            expected="e.g. 1_000_000 (or None when unknown)",
            found=repr(total),
            fix="pass the time-step the run ends at",
        )
    return value
