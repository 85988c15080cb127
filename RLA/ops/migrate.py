"""Migrate runs to another task and/or data root, rewriting their ``run.json`` to match."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional, Union

from RLA.errors import RLAError
from RLA.layout import RUN_INFO_FILE, RunLayout, check_task
from RLA.ops.plan import COPY, MOVE, Plan, build_plan


def rewrite_run_info(target: RunLayout, source_index: str, copied: bool) -> None:
    """Make the moved (or copied) run's ``run.json`` name its new task, index and data root.

    Idempotent: the repair of an interrupted migration calls it again, and removes the temp
    file a write killed half-way left (the target is this operation's: no one else writes it).
    Durable (temp and folder fsynced): the journal is removed next, and a power cut after that
    must not bring back the old task and index.
    """
    from RLA.fs import atomic_write_json, remove_stale_temps
    from RLA.manager.run_info import read_run_info, redacted_run_info

    path = target.log_dir / RUN_INFO_FILE
    if not path.is_file():
        return
    remove_stale_temps(path)
    info = read_run_info(path)
    info.update(
        {"task": target.task, "index": target.index, "data_root": os.fspath(Path(target.data_root).resolve())}
    )
    if copied:
        info.setdefault("migrated_from", source_index)
    atomic_write_json(path, redacted_run_info(info), durable=True)


def _refuse_nested(source: Path, target: Path) -> None:
    """A target root inside the source root (``data/log``) or around it mixes data types:
    the source would list the copies as runs of tasks ``log/demo``, ``code/demo``...

    Raises:
        RLAError: one lies inside the other (links resolved).
    """
    src, dst = os.path.realpath(source), os.path.realpath(target)
    if src == dst:
        return
    common = os.path.commonpath([src, dst])
    if common in (src, dst):
        inner, outer = ("target", "source") if common == src else ("source", "target")
        raise RLAError(
            f"The {inner} data root is inside the {outer} data root",
            expected="two separate data roots (neither inside the other)",
            found=f"source {src}, target {dst}",
            fix="pick a target data root next to the source, not in or above it",
        )


def plan_migrate(
    data_root: Union[str, os.PathLike],
    runs: Iterable[RunLayout],
    to_task: Optional[str] = None,
    to_data_root: Optional[Union[str, os.PathLike]] = None,
    move: bool = False,
) -> Plan:
    """Plan copying (or moving) ``runs`` to task ``to_task`` under ``to_data_root``.

    Raises:
        RLAError: neither a new task nor a new data root, a target equal to the source, or
            one data root inside the other.
        UnsafePathError: ``to_task`` has ``..``, is absolute or has an empty component.
    """
    if to_task is None and to_data_root is None:
        raise RLAError(
            "Nothing to migrate to",
            expected="--to-task and/or --to-data-root",
            found="neither",
            fix="name the target task or data root",
        )
    if to_task is not None:
        check_task(to_task, "target task")
    target_root = Path(to_data_root) if to_data_root is not None else Path(data_root)
    if target_root.resolve() == Path(data_root).resolve() and to_task is None:
        raise RLAError(
            "The target equals the source",
            expected="another task or data root",
            found=str(target_root),
            fix="pass --to-task or another --to-data-root",
        )
    _refuse_nested(Path(data_root), target_root)
    return build_plan(
        MOVE if move else COPY,
        data_root,
        runs,
        target=lambda run: run.moved(data_root=target_root, task=to_task),
        target_root=target_root,
        rewrite=True,
        verb="move" if move else "copy",
    )
