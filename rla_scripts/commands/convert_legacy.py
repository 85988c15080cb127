"""``rla migrate --convert-legacy-state``: turn the selected runs' pickled state into JSON, once.

Only for your own runs: the original RLA pickled its whole ``Tester`` into
``archive_tester/<run>.pkl``; RLA never unpickles by default. This reads each selected
pickle with the restricted unpickler (:mod:`RLA.loader.legacy_pickle`: the original's
state classes and builtins, anything else refused) and writes ``<run>.json`` next to it
(without the FTP password). The pickle is left in place.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rla_scripts.commands._common import require_runs, select


def convert(args: argparse.Namespace, data_root: Path) -> int:
    """Convert each selected run; prints one line per run; exit 1 if any pickle was refused."""
    from RLA.errors import RLAError
    from RLA.loader.legacy_state import convert_legacy_state

    rows = require_runs(select(args, data_root, include_broken=True), args, data_root)
    failed = 0
    for row in rows:
        layout = row.layout
        try:
            written = convert_legacy_state(layout)
        except RLAError as exc:
            failed += 1
            print(f"refused {layout.index}: {exc}")
            continue
        if written is not None:
            print(f"converted {layout.index}: {written}")
        elif layout.archive_tester_file.exists():
            print(f"kept {layout.index}: {layout.archive_tester_file.name} already exists")
        else:
            print(f"skipped {layout.index}: no {layout.archive_tester_file.with_suffix('.pkl').name}")
    return 1 if failed else 0


__all__ = ["convert"]
