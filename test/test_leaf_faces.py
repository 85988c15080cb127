"""Faces of the original API are leaves: no core module of RLA imports one (issue #19 item 2).

The faces keep the original project's import paths (``RLA.easy_log.*``, ``RLA.easy_plot``...)
as thin layers over the core; if the core imported them back, the layers would be a cycle
and a face could not change without touching the core. The core is layers 0-3 of
docs/ARCHITECTURE.md (``RLA.loader.legacy_*`` read the original's files: they are core). The check reads every core module
with ``ast`` (it never imports them) and resolves each import, including
``from RLA import <lazy name>`` through ``RLA._LAZY`` and ``importlib.import_module("...")``
with a literal name, to the module it loads.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]

#: The faces of the original API (a module or a package, with everything under it).
FACES = (
    "RLA.easy_log",
    "RLA.easy_plot",
    "RLA.easy_torch",
    "RLA.easy_tf",
    "RLA.exp_loader",
    "RLA.query_tool",
    "RLA.utils",
    "RLA.auto_ftp",
    "RLA.email_send",
    "RLA.emb_test",
)
#: Not core either (layer 4 of docs/ARCHITECTURE.md, next to the faces): ``RLA/__init__.py``, the
#: package's own face (its lazy names point at the faces by design), the adapters for other
#: engines, which start runs with the global ``exp_manager`` as a user script does, and the test
#: harnesses that drive the CLI.
NOT_CORE = ("RLA", "RLA.integrations", "RLA.ops.testing", "RLA.query.testing")
#: Core modules that still import a face, each with the reason and who removes it. Empty
#: when the house is in order; a new entry needs a reason.
KNOWN: Dict[str, str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_face(module: str) -> bool:
    return any(module == face or module.startswith(face + ".") for face in FACES)


def core_modules() -> List[Tuple[str, Path]]:
    found = []
    for path in sorted((REPO / "RLA").rglob("*.py")):
        name = module_name(path)
        outside = any(name == top or (top != "RLA" and name.startswith(top + ".")) for top in NOT_CORE)
        if not is_face(name) and not outside:
            found.append((name, path))
    return found


def lazy_names() -> Dict[str, str]:
    """``from RLA import X`` -> the module X comes from (RLA/__init__.py's ``_LAZY`` table)."""
    import RLA

    return {name: module for name, (module, _attr) in RLA._LAZY.items()}


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join(package + ([node.module] if node.module else []))


def imported(module: str, tree: ast.AST, lazy: Dict[str, str]) -> Iterator[Tuple[int, str]]:
    """``(line, module loaded)`` for every import in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            yield node.lineno, base
            for alias in node.names:
                if base == "RLA" and alias.name in lazy:
                    yield node.lineno, lazy[alias.name]
                else:  # ``from RLA import easy_log`` loads the sub-module RLA.easy_log
                    yield node.lineno, f"{base}.{alias.name}"
        elif isinstance(node, ast.Call):
            target = _import_module_literal(node)
            if target is not None:
                yield node.lineno, target


def _import_module_literal(node: ast.Call) -> Optional[str]:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in ("import_module", "__import__") and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def offenders() -> List[str]:
    lazy = lazy_names()
    found = []
    for module, path in core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        importer = module + ".__init__" if path.name == "__init__.py" else module  # for relative imports
        for line, target in imported(importer, tree, lazy):
            if is_face(target):
                found.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    return sorted(set(found))


def test_no_core_module_imports_a_face() -> None:
    unexplained = [o for o in offenders() if o.split(":")[0] not in KNOWN]
    assert unexplained == [], "\n".join(unexplained)


def test_every_known_offender_still_offends() -> None:
    """An entry of KNOWN that no longer imports a face must be removed from the list."""
    still = {o.split(":")[0] for o in offenders()}
    assert sorted(set(KNOWN) - still) == []


def test_the_check_sees_every_spelling_of_a_face_import(tmp_path: Path) -> None:
    source = (
        "import RLA.easy_log.tester\n"
        "from RLA.easy_log import logger\n"
        "from RLA import easy_plot\n"
        "from RLA import exp_manager\n"
        "from ..easy_tf import tools\n"
        "import importlib\n"
        "importlib.import_module('RLA.query_tool')\n"
        "def f():\n"
        "    from RLA.utils.utils import x\n"
        "from RLA import logger, time_step_holder\n"
        "from RLA.logger import api\n"
    )
    found = [t for _, t in imported("RLA.loader.x", ast.parse(source), lazy_names()) if is_face(t)]
    assert sorted(set(found)) == sorted(
        {
            "RLA.easy_log.tester",
            "RLA.easy_log",
            "RLA.easy_log.logger",
            "RLA.easy_plot",
            "RLA.easy_tf",
            "RLA.easy_tf.tools",
            "RLA.query_tool",
            "RLA.utils.utils",
            "RLA.utils.utils.x",  # a name, not a module: reported with its module all the same
        }
    )
