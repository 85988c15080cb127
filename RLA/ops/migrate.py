"""Migrate runs to another task and/or data root, rewriting their ``run.json`` to match."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional

from RLA.errors import RLAError
from RLA.layout import RUN_INFO_FILE, RunLayout
from RLA.ops.plan import COPY, MOVE, Plan, RunPlan, build_plan


def _rewrite_run_info(plan: RunPlan) -> None:
    """Make the moved run's ``run.json`` name its new task, index and data root."""
    from RLA.manager.run_info import read_run_info, write_run_info

    assert plan.target is not None
    path = plan.target.log_dir / RUN_INFO_FILE
    if not path.is_file():
        return
    info = read_run_info(path)
    info.update({"task": plan.target.task, "index": plan.target.index,
                 "data_root": os.fspath(Path(plan.target.data_root).resolve())})
    if plan.action == COPY:
        info.setdefault("migrated_from", plan.run.index)
    write_run_info(path, info)


def plan_migrate(data_root: os.PathLike, runs: Iterable[RunLayout], to_task: Optional[str] = None,
                 to_data_root: Optional[os.PathLike] = None, move: bool = False) -> Plan:
    """Plan copying (or moving) ``runs`` to task ``to_task`` under ``to_data_root``.

    Raises:
        RLAError: neither a new task nor a new data root, or a target equal to the source.
    """
    if to_task is None and to_data_root is None:
        raise RLAError("Nothing to migrate to", expected="--to-task and/or --to-data-root",
                       found="neither", fix="name the target task or data root")
    if to_task is not None and (not to_task.strip("/") or to_task.startswith((".", "/"))
                                or ".." in to_task.split("/")):
        raise RLAError(f"Bad target task {to_task!r}", expected="a task name such as 'my_task' or 'a/b'",
                       found=repr(to_task), fix="use a relative name without '..'")
    target_root = Path(to_data_root) if to_data_root is not None else Path(data_root)
    if target_root.resolve() == Path(data_root).resolve() and to_task is None:
        raise RLAError("The target equals the source", expected="another task or data root",
                       found=str(target_root), fix="pass --to-task or another --to-data-root")
    return build_plan(MOVE if move else COPY, data_root, runs,
                      target=lambda run: run.moved(data_root=target_root, task=to_task),
                      target_root=target_root, after_move=_rewrite_run_info,
                      verb="move" if move else "copy")
