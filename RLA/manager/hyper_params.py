"""The hyper-parameters a run records: tracked keys (dotted paths), their values, JSON copies."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from RLA.errors import HyperParameterError
from RLA.fs import json_default
from RLA.manager.bookkeeping import split_bookkeeping

#: What :func:`lookup_dotted` returns for a key that is not set.
MISSING = object()


def lookup_dotted(params: Mapping[str, Any], key: str) -> Any:
    """``params['a']['b']`` for ``key == 'a.b'`` (a plain key wins over a dotted path)."""
    if key in params:
        return params[key]
    node: Any = params
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif hasattr(node, part) and not isinstance(node, dict):
            node = getattr(node, part)
        else:
            return MISSING
    return node


def jsonable(value: Any) -> Any:
    """A JSON-compatible deep copy of ``value`` (numpy → lists, objects → repr)."""
    return json.loads(json.dumps(value, default=json_default, allow_nan=True))


def check_trackable(params: Mapping[str, Any], keys: Iterable[str]) -> None:
    """Every key can be tracked: it is set in ``params``.

    Raises:
        HyperParameterError: a key is not a hyper-parameter.
    """
    for key in keys:
        if lookup_dotted(params, key) is MISSING:
            raise HyperParameterError(
                f"Cannot track hyper-parameter {key!r}: it is not set",
                expected=f"one of {', '.join(map(str, params)) or '(none set)'}",
                found=repr(key),
                fix="call set_hyper_param(...) with it first",
            )


def tracked_values(params: Mapping[str, Any], tracked: Sequence[str]) -> List[Tuple[str, Any]]:
    """``(key, value)`` of each tracked key, in order.

    Raises:
        HyperParameterError: a tracked key is no longer set.
    """
    pairs = []
    for key in tracked:
        value = lookup_dotted(params, key)
        if value is MISSING:
            raise HyperParameterError(
                f"Tracked hyper-parameter {key!r} is no longer set",
                expected="every tracked key present in hyper_param",
                found=f"keys {sorted(map(str, params))}",
                fix="set it again or call clear_record_param()",
            )
        pairs.append((key, value))
    return pairs


def recorded_and_bookkeeping(
    params: Mapping[str, Any], tracked: Sequence[str], keys: Iterable[str]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """JSON copies of ``(hyper-parameters the run records, bookkeeping values)``."""
    recorded, bookkeeping = split_bookkeeping(params, tracked, keys)
    return jsonable(recorded), jsonable(bookkeeping)


__all__ = [
    "MISSING",
    "check_trackable",
    "jsonable",
    "lookup_dotted",
    "recorded_and_bookkeeping",
    "tracked_values",
]
