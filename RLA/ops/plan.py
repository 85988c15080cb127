"""Plans of changes to runs (move, copy, trash, purge): described first, then applied.

A :class:`Plan` holds one :class:`RunPlan` per run; each lists the data-type paths of that
run and where they go. Nothing touches the disk until :meth:`Plan.apply`. Every path is
checked to lie inside its data root; a run whose destination already exists is skipped
as a whole; a run whose move fails half-way is moved back, so all data types of a run
stay together.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Tuple

from RLA.errors import RLAError
from RLA.fs import move_to_trash
from RLA.layout import TRASH as TRASH_DIR
from RLA.layout import RunLayout

MOVE, COPY, TRASH, PURGE = "move", "copy", "trash", "purge"
ACTIONS = (MOVE, COPY, TRASH, PURGE)
Progress = Callable[[Iterable["RunPlan"], int], Iterable["RunPlan"]]


def inside(path: os.PathLike, root: os.PathLike) -> bool:
    """Whether ``path`` lies strictly inside ``root``, by name (``..`` normalised).

    Symlinks are not resolved on purpose: a data-type folder that is a symlink to another
    disk is still part of the database, and a run reached through ``root`` belongs to it.
    """
    path_abs = os.path.abspath(os.fspath(path))
    root_abs = os.path.abspath(os.fspath(root))
    try:
        return os.path.commonpath([path_abs, root_abs]) == root_abs and path_abs != root_abs
    except ValueError:
        return False


@dataclass
class Step:
    """One data type of one run: ``src`` goes to ``dst`` (``None`` for trash/purge)."""

    data_type: str
    src: Path
    dst: Optional[Path] = None


@dataclass
class RunPlan:
    """What happens to one run."""

    run: RunLayout
    action: str
    steps: List[Step] = field(default_factory=list)
    target: Optional[RunLayout] = None
    conflict: Optional[str] = None
    result: str = "planned"

    @property
    def index(self) -> str:
        return self.run.index

    def describe(self, verb: Optional[str] = None) -> str:
        """One line: ``<verb> <index> (<n> data types: log, code) [-> target]``."""
        kinds = ", ".join(step.data_type for step in self.steps)
        where = ""
        if self.target is not None:
            where = f" -> {'arc/' if self.target.archived else ''}{self.target.task}"
            if Path(self.target.data_root) != Path(self.run.data_root):
                where += f" in {self.target.data_root}"
        note = f"  SKIP: {self.conflict}" if self.conflict else ""
        return f"{verb or self.action:<7} {self.index} ({len(self.steps)} data types: {kinds}){where}{note}"


@dataclass
class Plan:
    """Changes to several runs; build with a planner, inspect, then :meth:`apply`."""

    action: str
    data_root: Path
    runs: List[RunPlan] = field(default_factory=list)
    verb: str = ""
    target_root: Optional[Path] = None
    after_move: Optional[Callable[[RunPlan], None]] = None

    @property
    def ready(self) -> List[RunPlan]:
        return [plan for plan in self.runs if plan.conflict is None]

    @property
    def blocked(self) -> List[RunPlan]:
        return [plan for plan in self.runs if plan.conflict is not None]

    def describe(self) -> str:
        """Every run on its own line plus a summary line."""
        verb = self.verb or self.action
        lines = [plan.describe(verb) for plan in self.runs]
        lines.append(f"{len(self.ready)} runs to {verb}"
                     + (f", {len(self.blocked)} skipped" if self.blocked else ""))
        return "\n".join(lines)

    def check(self) -> None:
        """Refuse any path outside its data root (nothing has been changed yet).

        Raises:
            RLAError: a source or destination escapes its data root.
        """
        for plan in self.runs:
            for step in plan.steps:
                if not inside(step.src, self.data_root):
                    raise RLAError(f"Refusing to {self.verb or self.action} {step.src}", expected=f"a path inside {self.data_root}",
                                   found="a path outside the data root", fix="check --data-root")
                root = self.target_root or self.data_root
                if step.dst is not None and not inside(step.dst, root):
                    raise RLAError(f"Refusing to write {step.dst}", expected=f"a path inside {root}",
                                   found="a path outside the target root", fix="check the target")

    def apply(self, progress: Optional[Progress] = None) -> List[RunPlan]:
        """Carry out the plan; returns every run plan with its ``result`` filled in."""
        self.check()
        items: Iterable[RunPlan] = self.runs
        if progress is not None:
            items = progress(self.runs, len(self.runs))
        for plan in items:
            if plan.conflict is not None:
                plan.result = f"skipped ({plan.conflict})"
                continue
            try:
                _apply_run(plan, self.data_root)
                for step in plan.steps:
                    if plan.action != COPY:
                        _prune_empty(step.src.parent, self.data_root)
            except OSError as exc:
                plan.result = f"failed ({exc})"
                continue
            if self.after_move is not None and plan.target is not None:
                try:
                    self.after_move(plan)
                except (OSError, ValueError) as exc:
                    plan.result = f"done, but run.json not updated ({exc})"
                    continue
            plan.result = "done"
        return self.runs


def _prune_empty(folder: Path, data_root: Path) -> None:
    """Remove now-empty day/month/year/task folders left behind (never the type roots)."""
    root = Path(data_root)
    folder = Path(folder)
    while inside(folder, root) and len(folder.relative_to(root).parts) > 2:
        if folder.relative_to(root).parts[0] == "arc" and len(folder.relative_to(root).parts) <= 3:
            return
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _trash(path: Path, data_root: Path) -> None:
    """Move ``path`` (never what a symlink points to) into ``<data_root>/.trash/``."""
    if not path.is_symlink():
        try:
            move_to_trash(path, data_root)
            return
        except ValueError:
            pass  # reached through a symlinked folder: resolve() leaves the root; move by name
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(data_root))
    target = Path(data_root) / TRASH_DIR / time.strftime("%Y%m%d-%H%M%S") / f"{os.getpid()}" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(os.fspath(path), os.fspath(target))


def _apply_run(plan: RunPlan, data_root: Path) -> None:
    done: List[Tuple[Path, Path]] = []
    try:
        for step in plan.steps:
            if plan.action == TRASH:
                _trash(step.src, data_root)
            elif plan.action == PURGE:
                _remove(step.src)
            else:
                assert step.dst is not None
                step.dst.parent.mkdir(parents=True, exist_ok=True)
                if plan.action == COPY:
                    if step.src.is_dir():
                        shutil.copytree(step.src, step.dst, symlinks=True)
                    else:
                        shutil.copy2(step.src, step.dst)
                else:
                    shutil.move(os.fspath(step.src), os.fspath(step.dst))
                    done.append((step.src, step.dst))
    except OSError:
        for src, dst in reversed(done):  # keep every data type of the run together
            try:
                shutil.move(os.fspath(dst), os.fspath(src))
            except OSError:
                pass
        raise


def build_plan(action: str, data_root: os.PathLike, runs: Iterable[RunLayout],
               target: Optional[Callable[[RunLayout], RunLayout]] = None,
               target_root: Optional[os.PathLike] = None,
               after_move: Optional[Callable[[RunPlan], None]] = None, verb: str = "") -> Plan:
    """Plan ``action`` for every data type of each run.

    Args:
        action: move, copy, trash or purge.
        data_root: the source data root.
        runs: the runs.
        target: maps a run to its destination layout (move/copy).
        target_root: the destination data root when it differs from ``data_root``.
        after_move: called for each finished move/copy (e.g. to rewrite ``run.json``).
        verb: the word shown to users ("archive", "delete" ...).
    """
    if action not in ACTIONS:
        raise RLAError(f"Unknown action {action!r}", expected=f"one of {', '.join(ACTIONS)}",
                       found=repr(action), fix="use a listed action")
    plan = Plan(action, Path(data_root), target_root=Path(target_root) if target_root else None,
                after_move=after_move, verb=verb or action)
    for run in runs:
        dest = target(run) if target is not None else None
        run_plan = RunPlan(run, action, target=dest)
        for data_type, src in sorted(run.existing_paths().items()):
            dst = None
            if dest is not None:
                dst = dest.path(data_type)
                if src.suffix == ".pkl" and dst.suffix == ".json":
                    dst = dst.with_suffix(".pkl")
                if os.path.lexists(dst):
                    run_plan.conflict = f"{dst} already exists"
            run_plan.steps.append(Step(data_type, src, dst))
        if not run_plan.steps:
            run_plan.conflict = "no data on disk any more"
        plan.runs.append(run_plan)
    return plan
