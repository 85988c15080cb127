"""The trash: list the runs ``rla delete`` moved to ``<data_root>/.trash/`` and restore them.

``.trash/<stamp>/`` holds what one operation deleted (``<stamp>`` is the delete's operation id,
``YYYYmmdd-HHMMSS-<pid>-<hex>``, or ``YYYYmmdd-HHMMSS-<pid>`` for the checkpoints an in-place
resume discarded), laid out like a data root: ``log/<task>/<YYYY>/<MM>/<DD>/<name>``,
``arc/log/...``, ``archive_tester/.../<name>.json`` ...

A restore is a :class:`RLA.ops.plan.Plan` of moves from the stamp folder back to the run's
place: the same journal, lock, crash repair and whole-run rollback as archive and delete. It
refuses a run whose place holds any of its data types again (a run restored or recreated
since), checked again under the lock. Emptying is in :mod:`RLA.ops.trash_empty`.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from RLA.errors import RunNotFoundError
from RLA.layout import DATA_TYPES, TRASH, RunLayout, find_runs, iter_run_dirs
from RLA.ops.plan import MOVE, Plan, Progress, RunPlan, fill_run_plan
from RLA.safe_paths import check_name, no_symlink_between
from RLA.text import count

_STAMP_RE = re.compile(r"^(?P<when>\d{8}-\d{6})-\d+(?:-[0-9a-f]+)?$")


def trash_dir(data_root: Union[str, os.PathLike]) -> Path:
    """``<data_root>/.trash`` (refused when it is a link: it could lead outside the data root).

    Raises:
        UnsafePathError: ``.trash`` is a symbolic link.
    """
    path = Path(data_root) / TRASH
    no_symlink_between(data_root, path)
    return path


def stamp_time(stamp: str) -> Optional[_dt.datetime]:
    """The local time a stamp folder was made, from its name (``None`` for other names)."""
    match = _STAMP_RE.match(stamp)
    if match is None:
        return None
    try:
        return _dt.datetime.strptime(match["when"], "%Y%m%d-%H%M%S")
    except ValueError:
        return None


def stamp_folders(data_root: Union[str, os.PathLike]) -> List[Path]:
    """The stamp folders of the trash, oldest first (links and hidden entries skipped)."""
    folder = trash_dir(data_root)
    if not folder.is_dir():
        return []
    return sorted(
        entry
        for entry in folder.iterdir()
        if not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink()
    )


@dataclass(frozen=True)
class TrashedRun:
    """One run (or the part of it) found in one stamp folder of the trash.

    Attributes:
        stamp: the stamp folder's name.
        layout: the run inside the stamp folder (its ``data_root`` is that folder).
        data_types: the data types found there.
    """

    stamp: str
    layout: RunLayout
    data_types: Tuple[str, ...]

    @property
    def index(self) -> str:
        return self.layout.index

    @property
    def deleted_at(self) -> Optional[_dt.datetime]:
        return stamp_time(self.stamp)

    def home(self, data_root: Union[str, os.PathLike]) -> RunLayout:
        """Where the run lived (and goes back to) in ``data_root``."""
        return self.layout.moved(data_root=Path(data_root))

    def size(self) -> int:
        """Bytes of its files (links counted as links, never followed)."""
        total = 0
        for path in self.layout.existing_paths().values():
            entries = [(str(path.parent), [], [path.name])] if not path.is_dir() else os.walk(path)
            for folder, _, files in entries:
                for name in files:
                    try:
                        total += os.lstat(os.path.join(folder, name)).st_size
                    except OSError:
                        pass
        return total


def _runs_in(stamp: Path, task: Optional[str]) -> Dict[Tuple[bool, str], RunLayout]:
    found: Dict[Tuple[bool, str], RunLayout] = {}
    for archived in (False, True):
        for data_type in DATA_TYPES:
            for run in iter_run_dirs(stamp, data_type, task=task, archived=archived):
                found.setdefault((archived, run.relative), run)
    return found


def list_trash(data_root: Union[str, os.PathLike], task: Optional[str] = None) -> List[TrashedRun]:
    """Every run in the trash (one entry per stamp folder it is in), oldest deletion first.

    Raises:
        UnsafePathError: ``.trash`` is a link, or ``task`` is not a plain relative path.
    """
    items = []
    for stamp in stamp_folders(data_root):
        for _, run in sorted(_runs_in(stamp, task).items()):
            items.append(TrashedRun(stamp.name, run, tuple(sorted(run.existing_paths()))))
    return items


def find_trashed(
    data_root: Union[str, os.PathLike],
    selectors: Sequence[str] = (),
    task: Optional[str] = None,
    stamp: Optional[str] = None,
) -> List[TrashedRun]:
    """The trashed runs matching any of ``selectors`` (index, prefix or glob of
    ``YYYY/MM/DD/<name>``, as everywhere), in ``task`` and stamp folder ``stamp`` if given.

    Raises:
        RunNotFoundError: nothing matches, or one run is in several stamp folders (which
            one to restore is the user's choice: ``stamp``).
        UnsafePathError: a bad selector, task or stamp name.
    """
    if stamp is not None:
        check_name(stamp, "trash stamp")
    items = [item for item in list_trash(data_root, task) if stamp is None or item.stamp == stamp]
    if selectors:
        wanted: set = set()
        for selector in selectors:
            for folder in {item.stamp for item in items}:
                base = trash_dir(data_root) / folder
                for archived in (False, True):
                    wanted.update(
                        (folder, archived, run.relative)
                        for run in find_runs(base, selector, task=task, archived=archived)
                    )
        items = [i for i in items if (i.stamp, i.layout.archived, i.layout.relative) in wanted]
    if not items:
        raise RunNotFoundError(
            f"No run in the trash of {data_root} matches",
            expected="a trashed run (`rla trash list` shows them)",
            found=_filters(selectors, task, stamp),
            fix="check the run, --task and --from",
        )
    _refuse_ambiguous(items)
    return items


def _filters(selectors: Sequence[str], task: Optional[str], stamp: Optional[str]) -> str:
    parts = (
        [repr(s) for s in selectors]
        + ([f"--task {task!r}"] if task else [])
        + ([f"--from {stamp!r}"] if stamp else [])
    )
    return ", ".join(parts) or "no filter"


def _refuse_ambiguous(items: Iterable[TrashedRun]) -> None:
    seen: Dict[Tuple[bool, str], List[str]] = {}
    for item in items:
        seen.setdefault((item.layout.archived, item.layout.relative), []).append(item.stamp)
    for (_, relative), stamps in seen.items():
        if len(stamps) > 1:
            raise RunNotFoundError(
                f"The run {relative} is in the trash {len(stamps)} times",
                expected="one trashed copy to restore",
                found=", ".join(stamps),
                fix=f"pick one with --from {stamps[-1]} (the newest deletion is last)",
            )


class RestorePlan(Plan):
    """A move plan from the trash back to the runs' places (see the module docstring)."""

    def refresh(self) -> None:
        super().refresh()
        for run_plan in self.runs:
            refuse_live_run(run_plan)

    def describe(self) -> str:
        lines = []
        for plan in self.runs:
            kinds = ", ".join(step.data_type for step in plan.steps)
            stamp = Path(plan.run.data_root).name
            skip = f"  SKIP: {plan.conflict}" if plan.conflict else ""
            where = "arc/" if plan.run.archived else ""
            lines.append(
                f"restore {where}{plan.index} ({count(len(plan.steps), 'data type')}: {kinds}) "
                f"from {TRASH}/{stamp}{skip}"
            )
        lines.append(
            f"{count(len(self.ready), 'run')} to restore"
            + (f", {len(self.blocked)} skipped" if self.blocked else "")
        )
        return "\n".join(lines)

    def apply(self, progress: Optional[Progress] = None) -> List[RunPlan]:
        try:
            return super().apply(progress)
        finally:
            for folder in {Path(plan.run.data_root) for plan in self.runs}:
                prune_stamp(folder)


def refuse_live_run(run_plan: RunPlan) -> None:
    """Mark a restore whose run exists again at its place as a conflict: any of its data types,
    also one the trashed copy lacks (a checkpoint folder recreated after the delete)."""
    if run_plan.target is None:
        return
    live = sorted(run_plan.target.existing_paths())
    if live:
        run_plan.conflict = (
            f"the run exists again in the data root ({', '.join(live)}); restoring would mix two runs"
        )


def plan_restore(data_root: Union[str, os.PathLike], items: Iterable[TrashedRun]) -> RestorePlan:
    """Plan moving ``items`` (from :func:`find_trashed`) back to their places; nothing moves
    until ``apply()``.

    Raises:
        UnsafePathError: a run's task, date or name is not a safe path part.
        RunNotFoundError: the same run twice (from two stamp folders).
    """
    items = list(items)
    _refuse_ambiguous(items)
    plan = RestorePlan(MOVE, Path(data_root), verb="restore")
    for item in items:
        run_plan = RunPlan(item.layout, MOVE, target=item.home(data_root))
        fill_run_plan(plan, run_plan)
        refuse_live_run(run_plan)
        plan.runs.append(run_plan)
    return plan


def prune_stamp(folder: Path) -> None:
    """Remove the empty folders a restore left in a stamp folder (and the stamp if empty)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for dirpath, dirnames, _ in os.walk(folder, topdown=False):
        for name in dirnames:
            try:
                os.rmdir(os.path.join(dirpath, name))
            except OSError:
                pass  # not empty, or a link: left alone
    try:
        folder.rmdir()
    except OSError:
        pass
