"""``rla init``: write the documented ``rla_config.yaml`` and the database's ``.gitignore`` entries."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import List

from RLA.errors import RLAError
from RLA.fs import atomic_write_text
from RLA.layout import INDEX_DB, TRASH

#: What a project's .gitignore needs so the database never lands in git.
GITIGNORE_ENTRIES = ["**/archive_tester/**", "**/checkpoint/**", "**/code/**", "**/results/**",
                     "**/log/**", "**/arc/**", "**/replay/**", f"{TRASH}/", f"{INDEX_DB}*"]


def missing_entries(gitignore: Path) -> List[str]:
    """Entries of :data:`GITIGNORE_ENTRIES` not yet in ``gitignore``."""
    present = set()
    if gitignore.is_file():
        present = {line.strip() for line in gitignore.read_text(encoding="utf-8").splitlines()}
    return [entry for entry in GITIGNORE_ENTRIES if entry not in present]


def run(args: argparse.Namespace) -> int:
    from RLA.config import CONFIG_NAME, default_config_text

    folder = Path(args.dir)
    if not folder.is_dir():
        raise RLAError(f"Cannot initialise {folder}", expected="an existing folder", found="no such folder",
                       fix="create it first or pass another folder")
    config = folder / CONFIG_NAME
    gitignore = folder / ".gitignore"
    write_config = args.force or not config.exists()
    entries = missing_entries(gitignore)
    prefix = "would " if args.dry_run else ""
    print(f"{prefix}{'write' if write_config else 'keep existing'} {config}")
    print(f"{prefix}add {len(entries)} entries to {gitignore}" + (f": {' '.join(entries)}" if entries else ""))
    if args.dry_run:
        print("dry run: nothing changed")
        return 0
    if write_config:
        atomic_write_text(config, default_config_text(), durable=False)
    if entries:
        old = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
        block = ("" if not old or old.endswith("\n") else "\n") + "# RLA database (rla init)\n" + "\n".join(entries) + "\n"
        atomic_write_text(gitignore, old + block, durable=False)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("init", help="write rla_config.yaml and .gitignore entries",
                                   description="Write the documented default rla_config.yaml (kept if it "
                                               "exists, unless --force) and add the database folders to "
                                               ".gitignore without duplicating entries.")
    parser.add_argument("dir", nargs="?", default=".", help="project folder (default: current)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing rla_config.yaml")
    parser.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry; init never prompts")
    parser.set_defaults(func=run)
