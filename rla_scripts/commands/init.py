"""``rla init``: write the documented ``rla_config.yaml`` and the ``.gitignore`` entry of the data root."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional, Tuple

from RLA.errors import RLAError
from RLA.fs import atomic_write_text
from RLA.manager.code_backup import LEGACY_RLA_RULES
from RLA.text import count

#: The comment line above the entries ``rla init`` adds to ``.gitignore``.
BLOCK_MARKER = "# RLA database (rla init)"
#: What older versions of ``rla init`` wrote: unanchored folder names that also hid a project's
#: own ``code/``, ``log/`` or ``results/`` source folders. Removed from RLA's block on the next init.
LEGACY_ENTRIES = (*LEGACY_RLA_RULES, ".trash/", ".rla_index.sqlite*")


def data_root_entry(folder: Path, data_root: str) -> Optional[str]:
    """The anchored ``.gitignore`` line for ``data_root`` (``/data/``), None when it lies outside ``folder``."""
    root = (folder / data_root).resolve()
    try:
        relative = root.relative_to(folder.resolve())
    except ValueError:
        return None
    if relative == Path("."):
        raise RLAError(
            f"DATA_ROOT {data_root!r} is the project folder itself",
            expected="a database folder inside or outside the project, not the project root",
            found=str(root),
            fix="set DATA_ROOT: ./data in rla_config.yaml",
        )
    return "/" + relative.as_posix() + "/"


def plan_gitignore(old: str, entry: Optional[str]) -> Tuple[str, List[str], List[str]]:
    """The new ``.gitignore`` text, the entries added and the legacy entries removed from RLA's block."""
    lines = old.splitlines()
    removed: List[str] = []
    if BLOCK_MARKER in lines:
        start = lines.index(BLOCK_MARKER) + 1
        kept = []
        for line in lines[start:]:
            if line.strip() in LEGACY_ENTRIES:
                removed.append(line.strip())
            else:
                kept.append(line)
        lines = lines[:start] + kept
    present = {line.strip() for line in lines}
    added = [entry] if entry and entry not in present else []
    if added:
        if BLOCK_MARKER not in lines:
            lines.append(BLOCK_MARKER)
        at = lines.index(BLOCK_MARKER) + 1
        lines[at:at] = added
    text = "\n".join(lines) + ("\n" if lines else "")
    return text, added, removed


def _data_root_of(config: Path) -> str:
    """DATA_ROOT of an existing config, or the default ``./data``."""
    from RLA.config import load_config

    if config.is_file():
        value = load_config(config).DATA_ROOT
        if value:
            return value
    return "./data"


def run(args: argparse.Namespace) -> int:
    from RLA.config import CONFIG_NAME, default_config_text, installed_framework

    folder = Path(args.dir)
    if not folder.is_dir():
        raise RLAError(
            f"Cannot initialise {folder}",
            expected="an existing folder",
            found="no such folder",
            fix="create it first or pass another folder",
        )
    config = folder / CONFIG_NAME
    gitignore = folder / ".gitignore"
    write_config = args.force or not config.exists()
    framework = installed_framework()
    data_root = "./data" if write_config else _data_root_of(config)
    entry = data_root_entry(folder, data_root)
    old = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
    text, added, removed = plan_gitignore(old, entry)
    prefix = "would " if args.dry_run else ""
    if write_config:
        print(
            f"{prefix}write {config} (DL_FRAMEWORK: {framework}"
            f"{'' if framework == 'torch' else ', as torch is not installed'})"
        )
    else:
        print(f"{prefix}keep existing {config}")
    if entry is None:
        print(f"the data root {data_root} is outside {folder}: nothing to add to {gitignore}")
    print(
        f"{prefix}add {count(len(added), 'entry', 'entries')} to {gitignore}"
        + (f": {' '.join(added)}" if added else "")
    )
    if removed:
        print(
            f"{prefix}remove {count(len(removed), 'entry', 'entries')} an older rla init wrote ({' '.join(removed)}): "
            "they also hid project folders named like RLA's data types"
        )
    if args.dry_run:
        print("dry run: nothing changed")
        return 0
    if write_config:
        atomic_write_text(config, default_config_text(framework), durable=False)
    if text != old:
        atomic_write_text(gitignore, text, durable=False)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write rla_config.yaml and the data root's .gitignore entry",
        description="Write the documented default rla_config.yaml (kept if it "
        "exists, unless --force; DL_FRAMEWORK is the installed "
        "backend) and ignore the data root in .gitignore with one "
        "anchored entry (/data/), never folder names everywhere.",
    )
    parser.add_argument("dir", nargs="?", default=".", help="project folder (default: current)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing rla_config.yaml")
    parser.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry; init never prompts")
    parser.set_defaults(func=run)
