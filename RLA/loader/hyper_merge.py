"""The hyper-parameters of a resumed run: the past run's, merged with the current ones.

The past values win, except the keys the caller keeps and the bookkeeping keys; a value the
past run stored redacted (a secret) is taken from the current hyper-parameters.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Sequence

from RLA.errors import HyperParameterError, RLAError
from RLA.redaction import MARKER, contains_marker


def merge(
    current: Dict[str, Any], past: Dict[str, Any], keep: Sequence[str], bookkeeping: Iterable[str]
) -> Dict[str, Any]:
    """``past`` over ``current``, except the keys in ``keep`` and ``bookkeeping`` (current values).

    Raises:
        RLAError: ``keep`` names a key that is not a current hyper-parameter.
    """
    merged = dict(current)
    merged.update(copy.deepcopy(past))
    for key in list(keep) + list(bookkeeping):
        if key in current:
            merged[key] = current[key]
        elif key in keep:
            raise RLAError(
                f"hp_to_overwrite names {key!r}, which is not a current hyper-parameter",
                expected=f"one of {sorted(current)}",
                found=repr(key),
                fix="set it with exp_manager.set_hyper_param(...) first or drop it",
            )
    return merged


def restore_redacted(merged: Dict[str, Any], current: Dict[str, Any]) -> List[str]:
    """Take every stored value that was redacted (a secret) from the current hyper-parameters;
    returns the keys taken.

    A run never stores its secrets, so a resume must get them again from its own command
    line or environment; training on the text ``<redacted>`` would fail far from the cause.

    Raises:
        HyperParameterError: a redacted key has no current value.
    """
    redacted = sorted(key for key, value in merged.items() if contains_marker(value))
    missing = [key for key in redacted if key not in current]
    if missing:
        raise HyperParameterError(
            f"The past run's hyper-parameter(s) {', '.join(map(repr, missing))} were redacted (secrets are "
            f"never stored)",
            expected="the secret given again to the resuming process",
            found=f"{MARKER} in the stored value and no current value",
            fix="pass it on this command line (e.g. --{0} ...) or set_hyper_param({0}=...) "
            "before the loader".format(missing[0]),
        )
    for key in redacted:
        merged[key] = current[key]
    return redacted
