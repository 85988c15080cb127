"""The query language: parse a typed filter expression safely and evaluate it on runs.

Grammar (a subset of Python expressions, parsed with :func:`ast.parse` and checked node by
node against a whitelist, never evaluated by Python)::

    expr     := expr 'or' expr | expr 'and' expr | 'not' expr | '(' expr ')' | compare
    compare  := operand (('=='|'!='|'<'|'<='|'>'|'>='|'in'|'not in'|'is'|'is not') operand)+
    operand  := NAME ('.' NAME)* | literal | '[' literal, ... ']' | FUNC '(' 'metric' ')'
                | operand ('+'|'-'|'*'|'/') operand | '-' operand
    FUNC     := last | min | max         (over a run's progress.csv column)
              | matches(NAME, 'regex')   (regular-expression search on a value's text)

Names are hyper-parameters (dotted for nested ones, e.g. ``net.hidden``) or run columns
(``task``, ``status``, ``host``, ``ip``, ``index``, ``name``, ``time_step`` ...); a
hyper-parameter shadows a run column of the same name. Values are typed: numbers compare
numerically, a number written as text (legacy runs) is converted before comparing. A run
that lacks a name compares unequal to everything except ``None`` (``lr is None``); the
value semantics are in operators.py.

Bounds (each a :class:`QueryError` naming the limit): at most :data:`MAX_QUERY_CHARS`
characters, :data:`MAX_DEPTH` levels of nesting (``not not ...``, ``- - 1``, a long chain
of ``+``) and :data:`MAX_NODES` syntax nodes, checked without recursion before anything is
compiled, so neither the compiler nor the evaluator can exhaust the stack. ``matches()``
compiles with RE2 (linear-time matching; see :mod:`RLA.query.regex`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Optional, Set, Tuple

from RLA.errors import QueryError
from RLA.query import operators
from RLA.query.regex import UnsafePatternError, compile_pattern
from RLA.terminal import caret_block

#: Aggregate functions over a metric column.
METRIC_FUNCS = ("last", "min", "max")
_FUNCS = METRIC_FUNCS + ("matches",)
_MISSING = None
#: Longest query accepted (characters).
MAX_QUERY_CHARS = 10_000
#: Deepest nesting of operators accepted (levels of the syntax tree).
MAX_DEPTH = 64
#: Most syntax nodes accepted (names, literals, operators, comparisons ...).
MAX_NODES = 5_000

Getter = Callable[["RowView"], Any]


class RowView:
    """What an expression sees of one run: ``value(name)`` and ``metric(func, name)``.

    Args:
        values: hyper-parameters (looked up first).
        metrics: ``{metric: [last, min, max]}``.
        columns: computes the run columns on first need (they cost more than a dict lookup).
    """

    def __init__(
        self,
        values: Dict[str, Any],
        metrics: Dict[str, Any],
        columns: Optional[Callable[[], Dict[str, Any]]] = None,
    ) -> None:
        self.values = values
        self.metrics = metrics
        self._columns = columns
        self._computed: Optional[Dict[str, Any]] = None

    def value(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        if self._columns is None:
            return _MISSING
        if self._computed is None:
            self._computed = self._columns()
        return self._computed.get(name, _MISSING)

    def metric(self, func: str, name: str) -> Any:
        stats = self.metrics.get(name)
        if not stats:
            return _MISSING
        return stats[METRIC_FUNCS.index(func)]


def caret(text: str, offset: int) -> str:
    """``text`` (escaped for a terminal) followed by a line with ``^`` under the 0-based ``offset``."""
    return caret_block(text, offset)


def _error(text: str, offset: int, problem: str, expected: str, fix: str) -> QueryError:
    error = QueryError(
        f"{problem} at column {offset + 1}", expected=expected, found=caret(text, offset), fix=fix
    )
    error.position = offset  # 0-based, into the stripped text: where a UI puts its caret
    # The found block's line breaks are ours: the command line keeps them (terminal.render_error).
    error.found_is_caret = True
    return error


@dataclass(frozen=True)
class Query:
    """A parsed expression: call :meth:`matches` on a :class:`RowView`.

    Attributes:
        text: the expression as written.
        names: hyper-parameter / column names it reads.
        metrics: metric columns it reads through ``last``/``min``/``max``.
    """

    text: str
    predicate: Callable[[RowView], Any] = field(repr=False)
    names: FrozenSet[str] = frozenset()
    metrics: FrozenSet[str] = frozenset()
    positions: Tuple[Tuple[str, int], ...] = ()
    #: The top-level ``and`` terms: ``(names, metrics, predicate)`` each (the whole query
    #: when it is not a conjunction). A run matches only if every term is true for it.
    conjuncts: Tuple[Tuple[FrozenSet[str], FrozenSet[str], Callable[[RowView], Any]], ...] = field(
        default=(), repr=False
    )

    def matches(self, row: RowView) -> bool:
        """Whether the run satisfies the expression."""
        return bool(self.predicate(row))

    def position(self, name: str) -> int:
        """Column where ``name`` first appears (for error carets)."""
        for item, col in self.positions:
            if item == name:
                return col
        return 0


class _Compiler:
    def __init__(self, text: str) -> None:
        self.text = text
        self.names: Set[str] = set()
        self.metrics: Set[str] = set()
        self.positions: list = []

    def fail(self, node: ast.AST, problem: str, fix: str) -> QueryError:
        return _error(
            self.text,
            getattr(node, "col_offset", 0),
            problem,
            expected="comparisons of hyper-parameters/metrics joined by and/or/not, "
            "e.g. \"algo in ['sac', 'td3'] and lr >= 1e-4 and last('return') > 100\"",
            fix=fix,
        )

    def literal(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.literal(node.operand)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [self.literal(item) for item in node.elts]
        raise self.fail(
            node, "Not a literal", "use numbers, quoted strings, True/False/None or [lists] of them"
        )

    def dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def operand(self, node: ast.AST) -> Getter:
        name = self.dotted(node)
        if name is not None and isinstance(node, ast.expr):  # dotted() names only Name / Attribute
            self.names.add(name)
            self.positions.append((name, node.col_offset))
            return lambda row: row.value(name)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp) and type(node.op) in operators.ARITH:
            left, right = self.operand(node.left), self.operand(node.right)
            op = operators.arithmetic(operators.ARITH[type(node.op)])
            return lambda row: op(left(row), right(row))
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and not isinstance(node.operand, ast.Constant)
        ):
            inner = self.operand(node.operand)
            sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
            return lambda row: (lambda v: None if v is None else sign * v)(operators.number(inner(row)))
        if (
            isinstance(node, (ast.Compare, ast.BoolOp))
            or isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
        ):
            return self.boolean(node)
        value = self.literal(node)
        return lambda row: value

    def call(self, node: ast.Call) -> Getter:
        func = node.func.id if isinstance(node.func, ast.Name) else None
        if func not in _FUNCS or node.keywords:
            raise self.fail(
                node,
                f"Unknown function {ast.unparse(node.func)!r}",
                "use last('metric'), min('metric'), max('metric') or matches(name, 'regex')",
            )
        if func == "matches":
            if len(node.args) != 2:
                raise self.fail(node, "matches() takes two arguments", "write matches(name, 'regex')")
            target = self.operand(node.args[0])
            pattern = self.literal(node.args[1])
            if not isinstance(pattern, str):
                raise self.fail(
                    node.args[1], "matches() needs a quoted regex", "write matches(name, 'regex')"
                )
            try:
                found = compile_pattern(pattern)
            except UnsafePatternError as exc:
                raise self.fail(node.args[1], exc.reason, exc.fix) from None
            return lambda row: (lambda v: v is not None and found(str(v)))(target(row))
        if (
            len(node.args) != 1
            or not isinstance(node.args[0], ast.Constant)
            or not isinstance(node.args[0].value, str)
        ):
            raise self.fail(node, f"{func}() takes one quoted metric name", f"write {func}('return')")
        metric = node.args[0].value
        self.metrics.add(metric)
        self.positions.append((f"{func}('{metric}')", node.col_offset))
        self.positions.append((metric, node.col_offset))
        return lambda row: row.metric(func, metric)

    def compare(self, node: ast.Compare) -> Getter:
        getters = [self.operand(node.left)] + [self.operand(c) for c in node.comparators]
        ops = []
        for op in node.ops:
            if type(op) not in operators.COMPARE:
                raise self.fail(node, f"Unsupported operator {type(op).__name__}", "use == != < <= > >= in")
            ops.append(operators.COMPARE[type(op)])

        def evaluate(row: RowView) -> bool:
            left = getters[0](row)
            for op, getter in zip(ops, getters[1:]):
                right = getter(row)
                if not op(left, right):
                    return False
                left = right
            return True

        return evaluate

    def boolean(self, node: ast.AST) -> Getter:
        if isinstance(node, ast.BoolOp):
            parts = [self.boolean(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda row: all(part(row) for part in parts)
            return lambda row: any(part(row) for part in parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.boolean(node.operand)
            return lambda row: not inner(row)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call):
            getter = self.call(node)
            return lambda row: bool(getter(row))
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            flag = node.value
            return lambda row: flag
        name = self.dotted(node)
        if name is not None:  # a bare boolean hyper-parameter: `use_gae and lr < 1`
            getter = self.operand(node)
            return lambda row: getter(row) is True or getter(row) == 1
        raise self.fail(
            node, f"Unsupported expression {ast.unparse(node)!r}", "write a comparison such as lr >= 1e-4"
        )


_NESTING_FIX = "join conditions with and/or instead of nesting them; drop repeated not or signs"


def check_size(text: str, tree: ast.AST) -> None:
    """Refuse a syntax tree deeper than :data:`MAX_DEPTH` or larger than :data:`MAX_NODES`.

    Walks the tree with an explicit stack (no recursion), stopping at the first excess.

    Raises:
        QueryError: naming the limit, with a caret at the first node past it.
    """
    stack = [(tree, 0)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise _error(
                text,
                getattr(node, "col_offset", 0),
                "Query too large",
                expected=f"at most {MAX_NODES} names, values and operators",
                fix="split the query "
                "or select with fewer terms (e.g. x in [...] instead of x == a or x == b ...)",
            )
        if depth > MAX_DEPTH:
            raise _error(
                text,
                getattr(node, "col_offset", 0),
                "Query nested too deeply",
                expected=f"at most {MAX_DEPTH} levels of nested operators or parentheses",
                fix=_NESTING_FIX,
            )
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                stack.append((child, depth + 1))


def _too_deep(found: str) -> QueryError:
    """The error for a query nested deeper than the parser (or :data:`MAX_DEPTH`) accepts."""
    return QueryError(
        "Query nested too deeply",
        expected=f"at most {MAX_DEPTH} levels of nested operators or parentheses",
        found=found,
        fix=_NESTING_FIX,
    )


def _parse_tree(text: str) -> ast.Expression:
    """``text`` parsed by Python as one expression; its failures become :class:`QueryError`."""
    try:
        return ast.parse(text, mode="eval")
    except (RecursionError, MemoryError):  # Python's own parser gave up on the nesting
        raise _too_deep("more than Python's parser accepts") from None
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg):
            raise _too_deep(str(exc.msg)) from None
        hint = "use == to compare, and/or/not to combine, quotes around strings"
        if re.search(r"(?<![=!<>])=(?!=)", text):
            hint = "use == (not =) to test equality"
        raise _error(
            text,
            (exc.offset or 1) - 1,
            f"Syntax error in query ({exc.msg})",
            expected="a Python-like boolean expression",
            fix=hint,
        ) from None


def _conjuncts(text: str, body: ast.expr) -> Tuple[Tuple[FrozenSet[str], FrozenSet[str], Getter], ...]:
    """``(names, metrics, predicate)`` of each top-level ``and`` term of ``body`` (see :class:`Query`)."""
    terms = body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And) else [body]
    conjuncts = []
    for term in terms:
        part = _Compiler(text)
        getter = part.boolean(term)
        conjuncts.append((frozenset(part.names), frozenset(part.metrics), getter))
    return tuple(conjuncts)


def parse_query(text: str) -> Query:
    """Parse ``text`` into a :class:`Query`.

    Raises:
        QueryError: a syntax error (with a caret under the position) or a construct
            outside the grammar (function calls other than last/min/max/matches,
            attribute access on values, subscripts, lambdas, ...).
    """
    text = text.strip()
    if not text:
        raise QueryError(
            "Empty query",
            expected="an expression such as \"lr >= 1e-4\"",
            found="''",
            fix="drop --where or write a condition",
        )
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            "Query too long",
            expected=f"at most {MAX_QUERY_CHARS} characters",
            found=f"{len(text)} characters",
            fix="simplify the expression",
        )
    tree = _parse_tree(text)
    check_size(text, tree)
    compiler = _Compiler(text)
    predicate = compiler.boolean(tree.body)
    return Query(
        text=text,
        predicate=predicate,
        names=frozenset(compiler.names),
        metrics=frozenset(compiler.metrics),
        positions=tuple(compiler.positions),
        conjuncts=_conjuncts(text, tree.body),
    )
