"""Paths behind the original Tester's extra names on the manager (polixir's folders, relocation)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from RLA.errors import RunStateError
from RLA.layout import RunLayout
from RLA.manager.run import Run


def extra_dir(layout: Optional[RunLayout], data_type: str) -> Optional[str]:
    """``<data_root>/<data_type>/<task>/<date>/<name>/`` of the current run (created), or None."""
    if layout is None:
        return None
    folder = layout.type_root(data_type) / layout.task / layout.date / layout.name
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder) + "/"


def relocate(run: Optional[Run], root: Path) -> Path:
    """Make ``run``'s paths point under ``root`` (its copy in a moved database); returns the new root.

    Raises:
        RunStateError: no run yet, or the run has no log folder under ``root``.
    """
    if run is None:
        raise RunStateError(
            "update_log_files_location() needs a run",
            expected="log_files_gen() first",
            found="no run",
            fix="call exp_manager.log_files_gen() or use ExperimentLoader",
        )
    layout = run.layout
    moved = layout.moved(data_root=Path(root).expanduser().resolve())
    if not moved.log_dir.is_dir():
        raise RunStateError(
            f"The run {layout.index} is not under {root}",
            expected=f"{moved.log_dir}",
            found="no such folder",
            fix="copy the run there first (rla migrate --to-data-root)",
        )
    run.relocate(moved)
    return moved.data_root
