"""Paths behind the original Tester's extra names on the manager (polixir's folders, relocation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from RLA.errors import RunStateError


def extra_dir(manager: Any, data_type: str) -> Optional[str]:
    """``<data_root>/<data_type>/<task>/<date>/<name>/`` of the current run (created), or None."""
    layout = getattr(manager, "layout", None)
    if layout is None:
        return None
    folder = layout.type_root(data_type) / layout.task / layout.date / layout.name
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder) + "/"


def relocate(manager: Any, root: Path) -> None:
    """Make the manager's run paths point under ``root`` (the run's copy in a moved database).

    Raises:
        RunStateError: no run yet, or the run has no log folder under ``root``.
    """
    layout = getattr(manager, "layout", None)
    if layout is None:
        raise RunStateError(
            "update_log_files_location() needs a run",
            expected="log_files_gen() first",
            found="no run",
            fix="call exp_manager.log_files_gen() or use ExperimentLoader",
        )
    moved = layout.moved(data_root=Path(root).expanduser().resolve())
    if not moved.log_dir.is_dir():
        raise RunStateError(
            f"The run {layout.index} is not under {root}",
            expected=f"{moved.log_dir}",
            found="no such folder",
            fix="copy the run there first (rla migrate --to-data-root)",
        )
    manager.data_root = moved.data_root
    manager.layout = moved
