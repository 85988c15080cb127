"""Carry out one run of a journal: forward (finish it) or back (undo it), from any point.

Both directions only look at the disk (see :mod:`RLA.ops.steps`), so the same functions
serve the operation itself and the repair of an interrupted one.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from RLA.ops import steps
from RLA.ops.faults import fault_point
from RLA.ops.journal import Journal, JournalRun

MOVES = ("move", "trash")


def forward_run(journal: Journal, run: JournalRun) -> List[str]:
    """Do what is left of ``run``; returns the data types found neither at source nor target.

    Raises:
        steps.Blocked: a destination holds something else (the caller undoes the run).
        OSError: a move failed.
    """
    vanished: List[str] = []
    for step in run.steps:
        src, dst = journal.src_path(step), journal.dst_path(step)
        if journal.action == "purge":
            steps.purge(src, journal.op_id)
            done = True
        elif journal.action == "copy":
            assert dst is not None
            done = steps.copy(src, dst, journal.op_id)
        else:
            assert dst is not None
            done = steps.move(src, dst, journal.op_id)
        if not done and journal.action != "purge":
            vanished.append(step.data_type)
        fault_point("step-done")
    if run.rewrite and run.target is not None:
        from RLA.ops.migrate import rewrite_run_info

        rewrite_run_info(run.target, run.index, copied=journal.action == "copy")
    fault_point("run-done")
    return vanished


def back_run(journal: Journal, run: JournalRun) -> None:
    """Undo ``run`` so that all its data types are at the source again (a purge is never
    undone: its journal stays until a repair finishes it)."""
    if journal.action == "purge":
        return
    for step in reversed(run.steps):
        src, dst = journal.src_path(step), journal.dst_path(step)
        if journal.action == "copy":
            assert dst is not None
            steps.uncopy(dst, journal.op_id)
        else:
            assert dst is not None
            steps.unmove(src, dst, journal.op_id)


def prune_empty(folder: Path, data_root: Path) -> None:
    """Remove now-empty day/month/year folders left behind (never the task folder, the
    type roots, ``arc/<type>`` or ``.trash``)."""
    root = Path(data_root)
    folder = Path(folder)
    while True:
        try:
            parts = folder.relative_to(root).parts
        except ValueError:
            return
        floor = 4 if parts and parts[0] in ("arc", ".trash") else 3
        if len(parts) < floor:
            return
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def prune_run(journal: Journal, run: JournalRun) -> None:
    """Prune the folders the run's data types left (sources, and targets of an undone run)."""
    for step in run.steps:
        prune_empty(journal.src_path(step).parent, journal.data_root)
        dst = journal.dst_path(step)
        if dst is not None:
            prune_empty(dst.parent, journal.dst_root)
