"""Imports go one way: a lower layer of RLA never imports a higher one (docs/ARCHITECTURE.md).

The layers, bottom to top, are listed in :data:`LAYERS`. Every import counts, also one inside a
function (a lazy import is still a dependency) and one under ``if TYPE_CHECKING``. The check
reads the sources with ``ast``; it never imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional

REPO = Path(__file__).resolve().parents[1]

#: Bottom to top. A module belongs to the layer of its longest listed prefix.
LAYERS: List[List[str]] = [
    # 0. foundation: files, names, paths, settings, errors, and the checks at the boundary
    [
        "RLA.fs",
        "RLA.naming",
        "RLA.layout",
        "RLA.config",
        "RLA.errors",
        "RLA.registry",
        "RLA.safe_paths",
        "RLA.safe_read",
        "RLA.terminal",
        "RLA.text",
        "RLA.redaction",
        "RLA.install_hints",
        "RLA.version",
    ],
    # 1. the parts a run writes through
    ["RLA.logger", "RLA.checkpoint", "RLA.replay_buffer", "RLA.recorders", "RLA.trackers"],
    # 2. the run's lifecycle
    ["RLA.manager"],
    # 3. what works on many runs (or on a run from outside its process)
    [
        "RLA.query",
        "RLA.ops",
        "RLA.sync",
        "RLA.plot",
        "RLA.ui",
        "RLA.loader",
        "RLA.annotations",
        "RLA.run_diff",
    ],
    # 4. faces of the original API, adapters for other engines, the CLI
    [
        "RLA.easy_log",
        "RLA.easy_plot",
        "RLA.easy_torch",
        "RLA.easy_tf",
        "RLA.exp_loader",
        "RLA.query_tool",
        "RLA.auto_ftp",
        "RLA.email_send",
        "RLA.emb_test",
        "RLA.rla_argparser",
        "RLA.utils",
        "RLA.const",
        "RLA.integrations",
        "rla_scripts",
        # test harnesses shared by test/ and bench/ (they drive the CLI); the core never imports them
        "RLA.ops.testing",
        "RLA.query.testing",
    ],
]
_LAYER_OF: Dict[str, int] = {prefix: level for level, prefixes in enumerate(LAYERS) for prefix in prefixes}


class Violation(NamedTuple):
    """One import from a lower layer into a higher one."""

    where: str
    importer: str
    imported: str

    def __str__(self) -> str:
        lower, higher = layer_of(self.importer), layer_of(self.imported)
        return f"{self.where}: {self.importer} (layer {lower}) imports {self.imported} (layer {higher})"


def layer_of(module: str) -> Optional[int]:
    """The layer of a dotted module name (``None``: not RLA's, or the bare package ``RLA``)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        level = _LAYER_OF.get(".".join(parts[:end]))
        if level is not None:
            return level
    return None


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple]:
    """``(line, dotted name)`` of every import in ``tree`` (relative ones resolved)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".")
            if not node.level:
                base = node.module or ""
            for alias in node.names:  # `from RLA import logger` imports the module RLA.logger
                child = f"{base}.{alias.name}"
                yield node.lineno, child if layer_of(child) is not None else base


def violations(root: Path = REPO) -> List[Violation]:
    found = []
    for path in sorted([*root.glob("RLA/**/*.py"), *root.glob("rla_scripts/**/*.py")]):
        module = module_name(path, root)
        # The package's own __init__ is a face (its lazy names); importing it is not a dependency.
        here = len(LAYERS) - 1 if module == "RLA" else layer_of(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py"):
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                found.append(Violation(f"{path.relative_to(root).as_posix()}:{line}", module, target))
    return found


def test_every_package_module_has_a_layer():
    # A new top-level module or subpackage must be placed in LAYERS (and in docs/ARCHITECTURE.md).
    modules = [module_name(p) for p in [*REPO.glob("RLA/**/*.py"), *REPO.glob("rla_scripts/**/*.py")]]
    missing = sorted({_top(m) for m in modules if m != "RLA" and _top(m) not in _LAYER_OF})
    assert not missing, f"modules without a layer in test/test_layers.py: {missing}"


def _top(module: str) -> str:
    """``RLA.<first part>`` (or ``RLA`` itself, or ``rla_scripts``)."""
    parts = module.split(".")
    return parts[0] if parts[0] == "rla_scripts" else ".".join(parts[:2])


def test_no_lower_layer_imports_a_higher_one():
    found = violations()
    assert not found, f"{len(found)} imports against the layers:\n" + "\n".join(map(str, found))


def test_a_lazy_import_upwards_is_found(tmp_path):
    (tmp_path / "RLA" / "manager").mkdir(parents=True)
    (tmp_path / "RLA" / "__init__.py").write_text("")
    (tmp_path / "RLA" / "manager" / "__init__.py").write_text("")
    (tmp_path / "RLA" / "manager" / "run.py").write_text(
        "from RLA.fs import atomic_file\n\n\ndef f():\n    from RLA.sync import open_transport\n"
    )
    (tmp_path / "RLA" / "fs.py").write_text("from . import layout\nfrom .easy_log import tester\n")
    assert [str(v) for v in violations(tmp_path)] == [
        "RLA/fs.py:2: RLA.fs (layer 0) imports RLA.easy_log.tester (layer 4)",
        "RLA/manager/run.py:5: RLA.manager.run (layer 2) imports RLA.sync.open_transport (layer 3)",
    ]


def test_from_the_package_import_a_face_counts_as_the_face():
    tree = ast.parse("from RLA import easy_log\nfrom RLA.logger import api\n")
    assert [name for _, name in imported_modules(tree, "RLA.logger.core", False)] == [
        "RLA.easy_log",
        "RLA.logger.api",
    ]
