"""Continue a run in place: a restarted trial or requeued job goes on as the same RLA run.

A sweep engine restarts a trial (Ray Tune after a failure or a pause, submitit after a
timeout or a preemption) from its last checkpoint in a new process. The integrations then
call :func:`continue_run`, which

1. cuts the run's logs to the restored step in place: ``progress.csv`` / ``progress.json``
   keep the rows with ``time-step <= step``, TensorBoard events after it are dropped and the
   text logs get a "restarted" marker (the same cut as ``ExperimentLoader.fork_log_files``,
   :mod:`RLA.loader.continuation`); numbered checkpoints saved after the step move to the
   data root's ``.trash/`` (a later resume must never pick a checkpoint of the discarded future);
2. reopens the run with :meth:`ExperimentManager.reattach`: status ``running`` again, one more
   entry in ``run.json``'s ``restarts``, the time-step set to the restored step.

The cut is crash-safe: the current files are first hard-linked into ``<log_dir>/.rla-resume``
(built under a temporary name, then renamed: the commit point), and every later stage reads
only that copy, so a process killed during a cut is repaired by the next attempt.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, Optional, Union

from RLA.errors import RunNotFoundError
from RLA.fs import move_to_trash
from RLA.layout import LOG, RunLayout
from RLA.loader import continuation
from RLA.logger.time_step import time_step_holder
from RLA.manager import run_info as ri
from RLA.safe_paths import check_relative

#: Where the copy of the logs being cut lives (hidden; readers skip dot-names).
SCRATCH = ".rla-resume"
#: The log files a cut rewrites (run.json and anything else stay untouched).
LOG_FILES = (continuation.PROGRESS_CSV, continuation.PROGRESS_JSON) + continuation.TEXT_FILES
_CHECKPOINT_STEP = re.compile(r"^checkpoint-(\d+)\.")
#: "Nothing survives": the cut step of a run restarted without any checkpoint.
START_OVER = -math.inf


def layout_of(data_root: Union[str, Path], relative: str) -> RunLayout:
    """The layout of run ``<task>/<YYYY>/<MM>/<DD>/<name>`` under ``data_root``.

    Raises:
        RunNotFoundError: ``relative`` is not a run name or has no ``run.json`` there.
        UnsafePathError: ``relative`` has ``..``, a leading ``/`` or an empty part.
    """
    check_relative(relative, "run")
    root = Path(data_root).expanduser().resolve()
    try:
        layout = RunLayout.from_path(root, root / LOG / relative)
    except ValueError as exc:
        raise RunNotFoundError(
            "Not a run name",
            expected="<task>/<YYYY>/<MM>/<DD>/<HH-MM-SS-ffffff>_<ip>...",
            found=repr(relative),
            fix="pass the run's relative name",
        ) from exc
    if not layout.run_info_file.is_file():
        raise RunNotFoundError(
            "The run to continue has no run.json",
            expected=str(layout.run_info_file),
            found="no such file",
            fix="check the data root the run was created in",
        )
    return layout


def _snapshot_logs(log_dir: Path) -> Path:
    """Hard-link the log files into ``log_dir/.rla-resume`` (atomic: built, then renamed)."""
    scratch = log_dir / SCRATCH
    if scratch.is_dir():
        return scratch  # a previous cut was interrupted after its commit point: reuse its copy
    partial = log_dir / (SCRATCH + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    for name in LOG_FILES:
        if (log_dir / name).is_file():
            continuation.link_or_copy(log_dir / name, partial / name)
    if (log_dir / continuation.TB_DIR).is_dir():
        shutil.copytree(
            log_dir / continuation.TB_DIR,
            partial / continuation.TB_DIR,
            copy_function=lambda src, dst: continuation.link_or_copy(Path(src), Path(dst)),
        )
    os.replace(partial, scratch)
    return scratch


def cut_logs(layout: RunLayout, step: float, marker: str) -> Dict[str, int]:
    """Cut the run's logs in place to the rows with ``time-step <= step``.

    Args:
        layout: the run.
        step: the restored step (:data:`START_OVER` keeps no row).
        marker: the line added to the text logs.

    Returns:
        The counts of :func:`RLA.loader.continuation.continue_log_dir`.
    """
    log_dir = layout.log_dir
    scratch = _snapshot_logs(log_dir)
    for name in LOG_FILES:
        if (log_dir / name).is_file():
            os.unlink(log_dir / name)
    shutil.rmtree(log_dir / continuation.TB_DIR, ignore_errors=True)
    counts = continuation.continue_log_dir(scratch, log_dir, step, marker)  # type: ignore[arg-type]
    shutil.rmtree(scratch)
    return counts


def trash_later_checkpoints(layout: RunLayout, step: float) -> int:
    """Move the numbered checkpoints saved after ``step`` to the data root's ``.trash/``."""
    moved = 0
    folder = layout.checkpoint_dir
    if not folder.is_dir():
        return moved
    for entry in sorted(folder.iterdir()):
        match = _CHECKPOINT_STEP.match(entry.name)
        if match and entry.is_file() and int(match[1]) > step:
            move_to_trash(entry, layout.data_root)
            moved += 1
    return moved


def continue_run(
    manager: Any, layout: RunLayout, step: Optional[int], reason: str, **fields: Any
) -> RunLayout:
    """Continue ``layout`` in ``manager`` (configured for its data root) at ``step``.

    Args:
        manager: the experiment manager of this process (its hyper-parameters and tracked
            keys are set; they are written to ``run.json`` again).
        layout: the run to continue.
        step: the restored checkpoint's step; ``None``: no checkpoint, start over (no row kept).
        reason: why the run restarts (recorded in ``run.json``'s ``restarts``).
        fields: more ``run.json`` fields (e.g. the engine's trial facts).

    Returns:
        ``layout``; the run is active in ``manager`` and the time-step is ``step`` (or 0).
    """
    from RLA.logger import api as logger

    cut = START_OVER if step is None else step
    info = ri.read_run_info(layout.run_info_file)
    if manager.layout is not None and not getattr(manager, "_finished", True):
        manager.finish()
    logger.reset()  # no writer may hold the files being replaced
    marker = f"[RLA] ---- {reason}: run continues at time-step {step if step is not None else 'start'} ----"
    counts = cut_logs(layout, cut, marker)
    trashed = trash_later_checkpoints(layout, cut)
    restart = {
        "time": ri.now_iso(),
        "step": step,
        "reason": reason,
        "previous_status": info.get("status"),
        "rows_kept": counts.get("csv_rows", 0),
        "checkpoints_trashed": trashed,
    }
    manager.reattach(layout, restarts=list(info.get("restarts") or []) + [restart], **fields)
    time_step_holder.set_time(step if step is not None else 0)
    return layout


__all__ = ["continue_run", "cut_logs", "layout_of", "trash_later_checkpoints", "START_OVER", "SCRATCH"]
