"""The diagram in RLA/errors.py lists every RLAError subclass of the package, under its base.

The classes are found by reading the source (ast), not by importing every module, so a class
in a module with optional dependencies (ui, torch) is checked too.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import RLA
import RLA.errors

PACKAGE = Path(RLA.__file__).resolve().parent
_ROW = re.compile(r"^(?P<indent>[\s│├└─]*?)(?:[├└]── )?(?P<name>[A-Z]\w*Error)\b")


def _base_names(node: ast.ClassDef) -> List[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


@functools.lru_cache(maxsize=None)
def rla_error_classes(root: Path = PACKAGE) -> Dict[str, Tuple[str, List[str]]]:
    """Every class under ``root`` that derives (by name, transitively) from RLAError: name -> (file, bases)."""
    found: Dict[str, Tuple[str, List[str]]] = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "class " not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, (str(path.relative_to(root)), _base_names(node)))
    tree: Set[str] = {"RLAError"}
    grew = True
    while grew:
        grew = False
        for name, (_, bases) in found.items():
            if name not in tree and tree.intersection(bases):
                tree.add(name)
                grew = True
    return {name: found[name] for name in sorted(tree)}


def diagram_parents(doc: str) -> Dict[str, Set[str]]:
    """The diagram's rows as class -> the parents it is drawn under (a class may stand twice)."""
    lines = doc.split("::", 1)[1].split("\n\n", 2)[1].splitlines()
    parents: Dict[str, Set[str]] = {}
    stack: List[Tuple[int, str]] = []
    for line in lines:
        match = _ROW.match(line)
        assert match, f"not a diagram row: {line!r}"
        depth = len(match["indent"]) + (4 if "──" in line else 0)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents.setdefault(match["name"], set()).add(stack[-1][1] if stack else "")
        stack.append((depth, match["name"]))
    return parents


def test_every_rla_error_subclass_is_in_the_diagram_under_one_of_its_bases():
    drawn = diagram_parents(RLA.errors.__doc__ or "")
    classes = rla_error_classes()
    assert len(classes) > 20  # the walk found the package's classes
    missing = sorted(set(classes) - set(drawn))
    assert not missing, f"add these to the diagram in RLA/errors.py: {missing}"
    for name, (where, bases) in classes.items():
        if name == "RLAError":
            continue
        assert drawn[name] <= set(bases), (
            f"{name} ({where}) is drawn under {drawn[name]}, its bases are {bases}"
        )


def test_the_diagram_names_no_class_that_does_not_exist():
    assert set(diagram_parents(RLA.errors.__doc__ or "")) <= set(rla_error_classes())


def test_the_check_sees_a_new_subclass_missing_from_the_diagram(tmp_path):
    """The walk finds a subclass of a subclass in any module (so the first test can fail)."""
    (tmp_path / "errors.py").write_text("class RLAError(Exception): pass\n", encoding="utf-8")
    (tmp_path / "extra.py").write_text(
        "from RLA.errors import SyncError\nclass NewError(SyncError): pass\nclass Other(ValueError): pass\n",
        encoding="utf-8",
    )
    (tmp_path / "sync.py").write_text("class SyncError(errors.RLAError): pass\n", encoding="utf-8")
    assert set(rla_error_classes(tmp_path)) == {"RLAError", "SyncError", "NewError"}
