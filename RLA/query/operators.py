"""How query values compare and combine: typed, forgiving of legacy text numbers, never raising.

A number written as text (runs saved by older tools) is converted before it is compared with a
number; ``None`` (a run without that name) equals only ``None`` and orders with nothing; NaN
orders with nothing; values of types that cannot be compared are unequal and unordered;
arithmetic on a non-number or a division by zero gives ``None``.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Dict, Optional, Tuple


def number(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) and not isinstance(value, complex):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def coerce(a: Any, b: Any) -> Tuple[Any, Any]:
    """Make a number written as text comparable with a number."""
    a_num = isinstance(a, (int, float))
    b_num = isinstance(b, (int, float))
    if a_num and isinstance(b, str):
        nb = number(b)
        return (a, nb) if nb is not None else (a, b)
    if b_num and isinstance(a, str):
        na = number(a)
        return (na, b) if na is not None else (a, b)
    if isinstance(a, tuple):
        a = list(a)
    if isinstance(b, tuple):
        b = list(b)
    return a, b


def equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    a, b = coerce(a, b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - exotic values compare unequal
        return False


def ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        a, b = coerce(a, b)
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return False
        try:
            return bool(op(a, b))
        except TypeError:
            return False

    return compare


def contains(a: Any, b: Any) -> bool:
    if isinstance(b, str):
        return isinstance(a, str) and a in b
    if isinstance(b, (list, tuple, set, frozenset)):
        return any(equal(a, item) for item in b)
    return False


COMPARE: Dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: equal,
    ast.NotEq: lambda a, b: not equal(a, b),
    ast.Lt: ordered(operator.lt),
    ast.LtE: ordered(operator.le),
    ast.Gt: ordered(operator.gt),
    ast.GtE: ordered(operator.ge),
    ast.In: contains,
    ast.NotIn: lambda a, b: not contains(a, b),
    ast.Is: lambda a, b: a is None and b is None if (a is None or b is None) else equal(a, b),
    ast.IsNot: lambda a, b: not (a is None and b is None) if (a is None or b is None) else not equal(a, b),
}
ARITH: Dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def arithmetic(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        na, nb = number(a), number(b)
        if na is None or nb is None:
            return None
        try:
            return op(na, nb)
        except ZeroDivisionError:
            return None

    return apply
