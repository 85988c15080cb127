"""Compile the regular expressions of queries (``matches(name, 'regex')``) so a match cannot hang.

Python's ``re`` backtracks: ``matches(name, '(a+)+$')`` on a 30-character value runs for
minutes. RLA compiles with RE2 (the ``google-re2`` package, a dependency of RLA), whose
matching time is linear in the text; RE2 refuses backreferences and lookarounds, which
cannot be matched in linear time.

Without RE2 (a platform without a wheel) the fallback uses ``re`` but refuses, before
matching, every construct that makes backtracking blow up: a quantifier inside a repeated
group (``(a+)+``, ``(a*)*``), an alternation inside a repeated group (``(a|aa)*``),
backreferences, lookarounds, and more than :data:`MAX_UNBOUNDED` unbounded quantifiers
(``a*a*a*a*b`` is polynomial of that degree); it matches only the first
:data:`MAX_FALLBACK_TEXT` characters of a value.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

#: Unbounded quantifiers (``*``, ``+``, ``{n,}``) the fallback accepts in one pattern.
MAX_UNBOUNDED = 3
#: Characters of a value the fallback matches against.
MAX_FALLBACK_TEXT = 4096
#: Memory RE2 may use to compile one pattern (bytes).
RE2_MAX_MEM = 8 << 20

Matcher = Callable[[str], bool]


class UnsafePatternError(ValueError):
    """The pattern does not compile, or could backtrack catastrophically (with ``fix`` advice)."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fix = fix


def _re2() -> Any:
    try:
        import re2
    except ImportError:
        return None
    return re2


def engine() -> str:
    """``"re2"`` or ``"re (restricted)"``: which engine :func:`compile_pattern` uses."""
    return "re2" if _re2() is not None else "re (restricted)"


def compile_pattern(pattern: str) -> Matcher:
    """A function telling whether ``pattern`` is found in a text (``re.search`` semantics).

    Raises:
        UnsafePatternError: a syntax error, a construct the engine refuses, or (fallback
            only) a construct that could backtrack catastrophically.
    """
    re2 = _re2()
    if re2 is not None:
        return _compile_re2(re2, pattern)
    return _compile_fallback(pattern)


def _compile_re2(re2: Any, pattern: str) -> Matcher:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    try:
        compiled = re2.compile(pattern, options)
    except Exception as exc:  # noqa: BLE001 - re2 raises its own error type (and TypeError)
        text = exc.args[0] if exc.args else exc
        text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        raise UnsafePatternError(
            f"Bad regular expression ({text})",
            "fix the pattern (RE2 syntax: no backreferences or lookarounds)",
        ) from None
    return lambda text: compiled.search(text) is not None


def _compile_fallback(pattern: str) -> Matcher:
    import re

    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # Python < 3.11
        import sre_parse  # type: ignore[no-redef,unused-ignore]  # needed or not by the Python mypy targets
    try:
        parsed = sre_parse.parse(pattern)
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UnsafePatternError(f"Bad regular expression ({exc})", "fix the pattern") from None
    _check_tree(parsed, sre_parse)
    return lambda text: compiled.search(text[:MAX_FALLBACK_TEXT]) is not None


_FIX = "install google-re2 (pip install google-re2), or simplify the pattern"


def _children(op: Any, av: Any, c: Any) -> Iterable[Any]:
    """The sub-patterns of one parsed item."""
    if op in (c.MAX_REPEAT, c.MIN_REPEAT) or op == getattr(c, "POSSESSIVE_REPEAT", None):
        return [av[2]]
    if op == c.SUBPATTERN:
        return [av[-1]]
    if op == c.BRANCH:
        return list(av[1])
    if op == getattr(c, "ATOMIC_GROUP", None):
        return [av]
    return []


def _check_tree(parsed: Any, sre_parse: Any) -> None:
    """Refuse what can backtrack catastrophically (see the module docstring); iterative."""
    c = sre_parse
    unbounded = 0
    stack: list = [(parsed, False)]  # (sub-pattern, inside a repeated group)
    while stack:
        items, repeated = stack.pop()
        for op, av in items:
            if op in (c.GROUPREF, c.GROUPREF_EXISTS, c.ASSERT, c.ASSERT_NOT):
                raise UnsafePatternError("Backreferences and lookarounds are refused without RE2", _FIX)
            is_repeat = op in (c.MAX_REPEAT, c.MIN_REPEAT) or op == getattr(c, "POSSESSIVE_REPEAT", None)
            if is_repeat and av[1] > 1:
                if repeated:
                    raise UnsafePatternError(
                        "A quantifier inside a repeated group (like '(a+)+') can take exponential time", _FIX
                    )
                if av[1] == c.MAXREPEAT:
                    unbounded += 1
            if op == c.BRANCH and repeated:
                raise UnsafePatternError(
                    "An alternation inside a repeated group (like '(a|aa)*') can take exponential time",
                    "use a character class like [ab], or " + _FIX,
                )
            for child in _children(op, av, c):
                stack.append((child, repeated or (is_repeat and av[1] > 1)))
    if unbounded > MAX_UNBOUNDED:
        raise UnsafePatternError(
            f"{unbounded} unbounded quantifiers (at most {MAX_UNBOUNDED} without RE2)", _FIX
        )
