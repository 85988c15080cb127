"""Compile a ``where`` expression to SQL over the index's columns and SQLite's JSON functions.

The Python evaluator (:mod:`RLA.query.expr`, :mod:`RLA.query.operators`) is the reference.
Each node compiles to two SQL conditions: *may* (true for every run the expression may
select) and *must* (true only for runs it surely selects). Where SQL reproduces Python's
typed semantics exactly (numbers, booleans, text, missing values, ``in`` lists, ``is None``,
``last/min/max`` of a metric, ``task``, an ended run's ``status``, ``archived``) the two
are the same condition; where it cannot (a number written as text, list values,
arithmetic, ``matches()``, a running run's status, other run columns) *may* is true and
*must* false, and ``not`` swaps them. The index returns the *may* rows; the Python
evaluator then decides those rows exactly, so the answer is the reference's, and for the
usual filters only matching rows are decoded. Rows whose values SQLite cannot hold exactly
(``exact = 0``, see :mod:`RLA.query.stored`) are always candidates.
"""

from __future__ import annotations

import ast
import math
from typing import Any, List, Optional, Tuple

from RLA.query.expr import METRIC_FUNCS, Query
from RLA.query.operators import COMPARE
from RLA.query.stored import addressable

#: An SQL fragment and its ``?`` arguments.
Part = Tuple[str, Tuple[Any, ...]]
#: ``(may, must)``.
Tri = Tuple[Part, Part]
TRUE: Part = ("1", ())
FALSE: Part = ("0", ())
UNKNOWN: Tri = (TRUE, FALSE)
_SQL_OPS = {
    ast.Eq: "=",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "=",
    ast.IsNot: "!=",
}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NO_LITERAL = object()
#: ``(condition, kind, value expression)`` branches describing a name's value per row.
Branches = List[Tuple[Part, str, Part]]


def const(value: bool) -> Tri:
    return (TRUE, TRUE) if value else (FALSE, FALSE)


def exact(sql: str, args: Tuple[Any, ...] = ()) -> Tri:
    return (sql, args), (sql, args)


#: At most this many terms side by side: SQLite parses ``a OR b OR ...`` one level deeper per
#: term (at most 1000 levels), so longer joins are nested in halves (depth ~log2 of the terms).
_FLAT = 32


def _join(word: str, parts: List[Part]) -> Part:
    if len(parts) > _FLAT:
        half = len(parts) // 2
        parts = [_join(word, parts[:half]), _join(word, parts[half:])]
    return "(" + f" {word} ".join(p[0] for p in parts) + ")", tuple(a for p in parts for a in p[1])


def and_(items: List[Tri]) -> Tri:
    return _join("AND", [i[0] for i in items]), _join("AND", [i[1] for i in items])


def or_(items: List[Tri]) -> Tri:
    return _join("OR", [i[0] for i in items]), _join("OR", [i[1] for i in items])


def not_(item: Tri) -> Tri:
    (may, may_args), (must, must_args) = item
    return (f"(NOT {must})", must_args), (f"(NOT {may})", may_args)


def case(branches: List[Tuple[Part, Tri]]) -> Tri:
    """``CASE WHEN cond THEN tri ... END`` (the last branch's condition is the ELSE)."""
    out = []
    for pick in (0, 1):
        sql, args = "CASE", ()  # type: str, Tuple[Any, ...]
        for i, (cond, tri) in enumerate(branches):
            if i == len(branches) - 1:
                sql += f" ELSE {tri[pick][0]} END"
                args += tri[pick][1]
            else:
                sql += f" WHEN {cond[0]} THEN {tri[pick][0]}"
                args += cond[1] + tri[pick][1]
        out.append((sql, args))
    return out[0], out[1]


def _param(name: str) -> Branches:
    path = (f'$."{name}"',)  # an argument, never SQL text: a name may hold a quote
    t, v = "json_type(pjson, ?)", ("json_extract(pjson, ?)", path)
    return [
        ((f"{t} IN ('integer', 'real', 'true', 'false')", path), "num", v),
        ((f"{t} = 'text'", path), "text", v),
        ((f"{t} IS NULL OR {t} = 'null'", path * 2), "none", v),
        (TRUE, "other", v),
    ]  # an array or an (empty) object


_COLUMNS = {
    "task": [(TRUE, "text", ("task", ()))],
    "archived": [(TRUE, "num", ("archived", ()))],
    "status": [(("status = 'running'", ()), "unknown", TRUE), (TRUE, "text", ("status", ()))],
}


def _number(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _leaf(kind: str, expr: Part, op: str, value: Any) -> Tri:
    """``<value of this kind> op literal`` with the semantics of :mod:`RLA.query.operators`."""
    missing = const(op == "!=")  # what == / != / an ordering give when no types compare
    if kind == "unknown":
        return UNKNOWN
    if value is None:
        return const((kind == "none") == (op == "=")) if op in ("=", "!=") else const(False)
    if isinstance(value, list) or kind in ("none", "other"):
        return UNKNOWN if isinstance(value, list) and kind == "other" else missing
    if isinstance(value, str):
        if kind == "text":
            return exact(f"{expr[0]} {op} ?", expr[1] + (value,))
        value = _number(value)  # a number compares with text converted to a number
        if value is None:
            return missing
    if kind == "text" or isinstance(value, int) and abs(value) > 2**53:
        return UNKNOWN  # text converted by Python's float(), or beyond SQLite's exact numbers
    return exact(f"{expr[0]} {op} ?", expr[1] + (float(value) if isinstance(value, bool) else value,))


def _contains(kind: str, expr: Part, items: Any) -> Tri:
    """``value in literal`` (a list: any equal item; a string: a substring of it)."""
    if isinstance(items, list):
        return or_([_leaf(kind, expr, "=", item) for item in items]) if items else const(False)
    if isinstance(items, str) and kind == "text":
        return exact(f"instr(?, {expr[0]}) > 0", (items,) + expr[1])
    return UNKNOWN if kind == "unknown" else const(False)


def _literal_in(kind: str, expr: Part, value: Any) -> Tri:
    """``literal in value``."""
    if kind in ("unknown", "other"):
        return UNKNOWN
    if kind == "text" and isinstance(value, str):
        return exact(f"instr({expr[0]}, ?) > 0", expr[1] + (value,))
    return const(False)


class _SQLCompiler:
    def literal(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.literal(node.operand)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.literal(item) for item in node.elts]
            return _NO_LITERAL if any(item is _NO_LITERAL for item in items) else items
        return _NO_LITERAL

    def value(self, node: ast.AST) -> Optional[Branches]:
        """How a name or ``last/min/max('m')`` reads per row; None for anything else."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in METRIC_FUNCS:
            metric = node.args[0].value  # type: ignore[attr-defined]
            if not addressable(metric):
                return [(TRUE, "unknown", TRUE)]
            v = ("json_extract(mjson, ?)", (f'$."{metric}"[{METRIC_FUNCS.index(node.func.id)}]',))
            return [((f"{v[0]} IS NULL", v[1]), "none", v), (TRUE, "num", v)]
        name = _dotted(node)
        if name is None:
            return None
        if not addressable(name):
            return [(TRUE, "unknown", TRUE)]
        from RLA.query.names import RUN_COLUMNS

        if name not in RUN_COLUMNS:
            return _param(name)
        # A hyper-parameter of the same name shadows the run column.
        column = _COLUMNS.get(name, [(TRUE, "unknown", TRUE)])
        return [(("json_type(pjson, ?) IS NULL", (f'$."{name}"',)), "shadow", TRUE)] + column + _param(name)

    def branches(self, values: Branches, leaf: Any) -> Tri:
        """Apply ``leaf(kind, expr)`` per branch (a shadowed run column: column, else parameter)."""
        if values[0][1] == "shadow":
            split = 1 + next(i for i, b in enumerate(values[1:]) if b[0] == TRUE) + 1
            return case(
                [
                    (values[0][0], self.branches(values[1:split], leaf)),
                    (TRUE, self.branches(values[split:], leaf)),
                ]
            )
        if len(values) == 1:
            return leaf(values[0][1], values[0][2])
        return case([(cond, leaf(kind, expr)) for cond, kind, expr in values])

    def text_equal(self, node: ast.AST, literal: Any) -> Optional[Tri]:
        """``param == 'text'`` in one JSON lookup, when only a text value can equal the literal
        (not a number written as text, not a list or object's JSON text); None otherwise."""
        if not isinstance(literal, str) or _number(literal) is not None or literal[:1] in ("[", "{"):
            return None
        from RLA.query.names import RUN_COLUMNS

        name = _dotted(node)
        if name is None or not addressable(name) or name in RUN_COLUMNS:
            return None
        # ->> gives a JSON text as SQL text, numbers as numbers (never equal to a text), null as NULL
        return exact("ifnull(pjson ->> ? = ?, 0)", (f'$."{name}"', literal))

    def pair(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> Tri:
        lit_l, lit_r = self.literal(left), self.literal(right)
        if lit_l is not _NO_LITERAL and lit_r is not _NO_LITERAL:
            return const(bool(COMPARE[type(op)](lit_l, lit_r)))
        if isinstance(op, (ast.Eq, ast.NotEq)):
            fast = self.text_equal(left, lit_r) if lit_l is _NO_LITERAL else self.text_equal(right, lit_l)
            if fast is not None:
                return fast if isinstance(op, ast.Eq) else not_(fast)
        if isinstance(op, (ast.In, ast.NotIn)):
            values = self.value(left) if lit_r is not _NO_LITERAL else None
            if values is not None:
                tri = self.branches(values, lambda kind, expr: _contains(kind, expr, lit_r))
            else:
                values = self.value(right) if lit_l is not _NO_LITERAL else None
                if values is None:
                    return UNKNOWN
                tri = self.branches(values, lambda kind, expr: _literal_in(kind, expr, lit_l))
            return not_(tri) if isinstance(op, ast.NotIn) else tri
        sql_op = _SQL_OPS[type(op)]
        if lit_r is not _NO_LITERAL and (values := self.value(left)) is not None:
            return self.branches(values, lambda kind, expr: _leaf(kind, expr, sql_op, lit_r))
        if lit_l is not _NO_LITERAL and (values := self.value(right)) is not None:
            return self.branches(values, lambda kind, expr: _leaf(kind, expr, _FLIP[sql_op], lit_l))
        return UNKNOWN

    def boolean(self, node: ast.AST) -> Tri:
        if isinstance(node, ast.BoolOp):
            parts = [self.boolean(v) for v in node.values]
            return and_(parts) if isinstance(node.op, ast.And) else or_(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not_(self.boolean(node.operand))
        if isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
            return and_([self.pair(operands[i], op, operands[i + 1]) for i, op in enumerate(node.ops)])
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return const(node.value)
        values = self.value(node)
        if values is None:
            return UNKNOWN  # matches(), arithmetic ...
        if isinstance(node, ast.Call):  # bool(last('m')): logged and not zero
            return self.branches(
                values, lambda kind, expr: _leaf(kind, expr, "!=", 0) if kind == "num" else const(False)
            )
        # a bare name: `value is True or value == 1` (Python's ==: text is never 1)
        return self.branches(
            values,
            lambda kind, expr: _leaf(kind, expr, "=", 1) if kind in ("num", "unknown") else const(False),
        )


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def compile_query(query: Query) -> Tri:
    """``(may, must)`` SQL conditions over a ``runs`` row for a parsed query (see the module
    docstring); rows that are not ``exact`` are always *may* and never *must*."""
    tree = ast.parse(query.text, mode="eval")
    (may, may_args), (must, must_args) = _SQLCompiler().boolean(tree.body)
    return (f"(exact = 0 OR {may})", may_args), (f"(exact = 1 AND {must})", must_args)
