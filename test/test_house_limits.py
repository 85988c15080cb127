"""The house limits of issue #19: modules of at most 400 lines, functions of at most 60 lines.

A longer module or function is allowed only with its reason written down: a ``# size: <reason>``
comment on the line right above the ``def`` (above its decorators, if any), or, for a module,
among its first lines (before the module docstring ends). The check reads the sources with
``ast``; it never imports them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, List, NamedTuple, Union

REPO = Path(__file__).resolve().parents[1]
#: The code the limits apply to (tests, benchmarks and examples are not part of the house).
PACKAGES = ("RLA", "rla_scripts")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
#: How many first lines of a module may hold its ``# size:`` reason.
MODULE_HEADER_LINES = 5
SIZE_REASON = re.compile(r"^\s*#\s*size:\s*\S")

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class Offender(NamedTuple):
    """One module or function over its limit without a written reason."""

    where: str
    lines: int
    limit: int

    def __str__(self) -> str:
        return f"{self.where}: {self.lines} lines (limit {self.limit})"


def sources(root: Path = REPO) -> List[Path]:
    """Every Python file of the packages, sorted."""
    return sorted(path for package in PACKAGES for path in (root / package).rglob("*.py"))


def module_exempt(lines: List[str], tree: ast.Module) -> bool:
    """Whether a ``# size:`` comment sits in the module's first lines (or in its docstring's span)."""
    header = MODULE_HEADER_LINES
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        header = max(header, tree.body[0].end_lineno or 0)
    return any(SIZE_REASON.match(line) for line in lines[:header])


def function_exempt(lines: List[str], node: FunctionNode) -> bool:
    """Whether the line right above the ``def`` (or above its first decorator) is ``# size: ...``."""
    above = {node.lineno - 1} | {d.lineno - 1 for d in node.decorator_list[:1]}
    return any(n >= 1 and SIZE_REASON.match(lines[n - 1]) for n in above)


def functions(tree: ast.AST) -> Iterator[tuple]:
    """``(qualified name, node)`` of every function and method, nested ones included."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def offenders(path: Path, root: Path = REPO) -> List[Offender]:
    """The modules and functions of ``path`` over their limits without a ``# size:`` reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    rel = path.relative_to(root).as_posix()
    found = []
    if len(lines) > MAX_MODULE_LINES and not module_exempt(lines, tree):
        found.append(Offender(rel, len(lines), MAX_MODULE_LINES))
    for name, node in functions(tree):
        length = (node.end_lineno or node.lineno) - node.lineno + 1  # the def line to the last
        if length > MAX_FUNCTION_LINES and not function_exempt(lines, node):
            found.append(Offender(f"{rel}:{node.lineno} {name}()", length, MAX_FUNCTION_LINES))
    return found


def test_modules_and_functions_keep_the_house_limits():
    found = [offender for path in sources() for offender in offenders(path)]
    assert not found, (
        f"{len(found)} over the house limits (shorten them, or write why on the line above: "
        "'# size: <reason>'):\n" + "\n".join(map(str, found))
    )


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "RLA" / "mod.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _function(name: str, body_lines: int, above: str = "", decorator: str = "") -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{above}{decorator}def {name}():\n{body}"


def test_a_long_function_is_reported_with_its_place_and_length(tmp_path):
    path = _write(tmp_path, '"""Doc."""\n\n\n' + _function("short", 59) + "\n\n" + _function("long", 60))
    found = offenders(path, tmp_path)
    assert [str(o) for o in found] == ["RLA/mod.py:66 long(): 61 lines (limit 60)"]


def test_a_size_comment_right_above_the_def_or_its_decorator_excuses_it(tmp_path):
    text = (
        '"""Doc."""\n\n\n'
        + _function("a", 70, above="# size: one table of cases, read top to bottom\n")
        + "\n\n"
        + _function("b", 70, above="# size: generated dispatch\n", decorator="@staticmethod\n")
        + "\n\n"
        + _function("c", 70, decorator="@staticmethod\n# size: a decorated one, reason below the decorator\n")
    )
    assert offenders(_write(tmp_path, text), tmp_path) == []


def test_a_size_comment_elsewhere_does_not_excuse_it(tmp_path):
    text = '"""Doc."""\n\n# size: too far away\n\n' + _function("a", 70)
    found = offenders(_write(tmp_path, text), tmp_path)
    assert [o.where for o in found] == ["RLA/mod.py:5 a()"]


def test_methods_and_nested_functions_are_measured(tmp_path):
    method = "".join("    " + line + "\n" for line in _function("m", 65).splitlines())
    text = '"""Doc."""\n\n\nclass K:\n' + method
    found = offenders(_write(tmp_path, text), tmp_path)
    assert [o.where for o in found] == ["RLA/mod.py:5 K.m()"]


def test_a_long_module_needs_a_reason_in_its_first_lines(tmp_path):
    filler = "".join(f"X{i} = {i}\n" for i in range(400))
    found = offenders(_write(tmp_path, '"""Doc."""\n' + filler), tmp_path)
    assert [str(o) for o in found] == ["RLA/mod.py: 401 lines (limit 400)"]
    excused = '"""Doc."""\n# size: the one table of codes, kept in one place\n' + filler
    assert offenders(_write(tmp_path, excused), tmp_path) == []
