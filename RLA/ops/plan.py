"""Plans of changes to runs (move, copy, trash, purge): described first, then applied.

A :class:`Plan` holds one :class:`RunPlan` per run; each lists the data-type paths of that
run and where they go. Nothing touches the disk until :meth:`Plan.apply`, which takes the
data root's lock, finishes any interrupted operation, checks the plan again, writes an
intent journal (see :mod:`RLA.ops.journal`) and only then moves anything. A run whose
destination already exists is skipped as a whole; a run that fails half-way is moved back,
so all data types of a run stay together — also across a crash (the journal is rolled
forward by the next operation or ``rla fsck --repair``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Union

from RLA.errors import DiskFullError, RLAError
from RLA.layout import TRASH as TRASH_DIR
from RLA.layout import RunLayout, check_layout
from RLA.ops.faults import fault_point
from RLA.ops.guard import check_path
from RLA.ops.journal import Journal, JournalRun, JournalStep, new_op_id
from RLA.ops.lock import RootsLock
from RLA.ops.recover import Recovery, recover_locked
from RLA.ops.runner import back_run, forward_run, prune_run
from RLA.text import count

MOVE, COPY, TRASH, PURGE = "move", "copy", "trash", "purge"
ACTIONS = (MOVE, COPY, TRASH, PURGE)
Progress = Callable[[Iterable["RunPlan"], int], Iterable["RunPlan"]]


def inside(path: Union[str, os.PathLike], root: Union[str, os.PathLike]) -> bool:
    """Whether ``path`` lies strictly inside ``root``, by name (``..`` normalised)."""
    path_abs = os.path.abspath(os.fspath(path))
    root_abs = os.path.abspath(os.fspath(root))
    try:
        return os.path.commonpath([path_abs, root_abs]) == root_abs and path_abs != root_abs
    except ValueError:
        return False


@dataclass
class Step:
    """One data type of one run: ``src`` goes to ``dst`` (``None`` for a purge)."""

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
    #: The error that stopped this run (``result`` says it too).
    error: Optional[BaseException] = None

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
        return f"{verb or self.action:<7} {self.index} ({count(len(self.steps), 'data type')}: {kinds}){where}{note}"


@dataclass
class Plan:
    """Changes to several runs; build with a planner, inspect, then :meth:`apply`."""

    action: str
    data_root: Path
    runs: List[RunPlan] = field(default_factory=list)
    verb: str = ""
    target_root: Optional[Path] = None
    #: Rewrite each target's ``run.json`` (task, index, data root) after its data types moved.
    rewrite: bool = False
    op_id: str = field(default_factory=new_op_id)
    #: What :meth:`apply` found to finish from interrupted operations.
    recovery: Optional[Recovery] = None

    @property
    def ready(self) -> List[RunPlan]:
        return [plan for plan in self.runs if plan.conflict is None]

    @property
    def blocked(self) -> List[RunPlan]:
        return [plan for plan in self.runs if plan.conflict is not None]

    @property
    def dst_root(self) -> Path:
        return self.target_root if self.target_root is not None else self.data_root

    def describe(self) -> str:
        """Every run on its own line plus a summary line."""
        verb = self.verb or self.action
        lines = [plan.describe(verb) for plan in self.runs]
        lines.append(
            f"{count(len(self.ready), 'run')} to {verb}"
            + (f", {len(self.blocked)} skipped" if self.blocked else "")
        )
        return "\n".join(lines)

    def check(self) -> None:
        """Refuse unsafe names, paths outside their data root and links on the way.

        Raises:
            RLAError: a source or destination escapes its data root.
            UnsafePathError: a bad task/name, or a link where none may be.
        """
        verb = self.verb or self.action
        for plan in self.runs:
            check_layout(plan.run)
            if plan.target is not None:
                check_layout(plan.target)
            for step in plan.steps:
                if not inside(step.src, self.data_root):
                    raise RLAError(
                        f"Refusing to {verb} {step.src}",
                        expected=f"a path inside {self.data_root}",
                        found="a path outside the data root",
                        fix="check --data-root",
                    )
                if step.dst is not None and not inside(step.dst, self.dst_root):
                    raise RLAError(
                        f"Refusing to write {step.dst}",
                        expected=f"a path inside {self.dst_root}",
                        found="a path outside the target root",
                        fix="check the target",
                    )
                check_path(self.data_root, step.src, f"{step.data_type} folder")
                if step.dst is not None:
                    check_path(self.dst_root, step.dst, f"{step.data_type} destination")

    def refresh(self) -> None:
        """Plan every run again from the disk as it is now (under the lock)."""
        for plan in self.runs:
            fill_run_plan(self, plan)

    def apply(self, progress: Optional[Progress] = None) -> List[RunPlan]:
        """Carry out the plan; returns every run plan with its ``result`` filled in."""
        self.check()
        with RootsLock([self.data_root, self.dst_root]) as held:
            self.recovery = recover_locked(self.data_root, held)
            if self.dst_root != self.data_root:
                extra = recover_locked(self.dst_root, held)
                self.recovery.finished += extra.finished
                self.recovery.problems += extra.problems
            self.refresh()
            self.check()
            _execute(self, progress)
        return self.runs


def _journal_of(plan: Plan) -> Journal:
    journal = Journal(plan.op_id, plan.action, plan.verb or plan.action, plan.data_root, plan.target_root)
    for run_plan in plan.ready:
        steps = [
            JournalStep(
                step.data_type,
                Path(os.path.relpath(step.src, plan.data_root)).as_posix(),
                None if step.dst is None else Path(os.path.relpath(step.dst, plan.dst_root)).as_posix(),
            )
            for step in run_plan.steps
        ]
        journal.runs.append(JournalRun(run_plan.index, steps, run_plan.target, plan.rewrite))
    return journal


def _execute(plan: Plan, progress: Optional[Progress]) -> None:
    """Journal, then move run by run; a failed run is moved back (the journal stays only
    when one could not be). A full disk stops the operation: the run is moved back, the
    runs after it are left as they are, and the :class:`DiskFullError` is raised at the end.

    Raises:
        DiskFullError: a copy found no space (after the journal is settled).
    """
    for run_plan in plan.blocked:
        run_plan.result = f"skipped ({run_plan.conflict})"
    if not plan.ready:
        return
    journal = _journal_of(plan)
    journal.write()
    fault_point("journal-written")
    by_index = {run.index: run for run in journal.runs}
    items: Iterable[RunPlan] = plan.ready
    if progress is not None:
        items = progress(plan.ready, len(plan.ready))
    keep, full = False, None
    for run_plan in items:
        if full is not None:
            run_plan.result = "not done (the disk is full)"
            continue
        keep = _apply_run(plan, journal, by_index[run_plan.index], run_plan) or keep
        if isinstance(run_plan.error, DiskFullError):
            full = run_plan.error
    fault_point("before-journal-removed")
    if not keep:
        journal.remove()
    if full is not None:
        done = sum(1 for run_plan in plan.ready if run_plan.result.startswith("done"))
        raise DiskFullError(
            f"{full.problem} ({done} of {count(len(plan.ready), 'run')} done, the others unchanged)",
            expected=full.expected,
            found=full.found,
            fix=full.fix,
            path=full.path,
            free=full.free,
            errno=full.errno,
        ) from full


def _apply_run(plan: Plan, journal: Journal, run: JournalRun, run_plan: RunPlan) -> bool:
    """Carry out one run (moved back when it fails); True when its journal must stay."""
    try:
        vanished = forward_run(journal, run)
        run_plan.result = "done" if not vanished else f"done, but {', '.join(vanished)} vanished meanwhile"
        return False
    except OSError as exc:
        run_plan.error = exc
        run_plan.result = f"failed ({exc}); moved back"
        if plan.action == PURGE:  # never undone: the repair finishes it
            run_plan.result = f"failed ({exc}): run `rla fsck --repair` to finish the purge"
            return True
        try:
            back_run(journal, run)
        except OSError as again:
            run_plan.result = f"failed ({exc}) and could not be moved back ({again}): run `rla fsck --repair`"
            return True
        return False
    finally:
        prune_run(journal, run)


def fill_run_plan(plan: Plan, run_plan: RunPlan) -> None:
    """(Re)compute the steps and the conflict of one run from the disk."""
    run, dest = run_plan.run, run_plan.target
    run_plan.steps, run_plan.conflict = [], None
    for data_type, src in sorted(run.existing_paths().items()):
        dst = None
        if dest is not None:
            dst = dest.path(data_type)
            if src.suffix == ".pkl" and dst.suffix == ".json":
                dst = dst.with_suffix(".pkl")
            if os.path.lexists(dst):
                run_plan.conflict = f"{dst} already exists"
        elif plan.action == TRASH:
            rel = os.path.relpath(os.path.abspath(src), os.path.abspath(plan.data_root))
            dst = plan.data_root / TRASH_DIR / plan.op_id / rel
        run_plan.steps.append(Step(data_type, src, dst))
    if not run_plan.steps:
        run_plan.conflict = "no data on disk any more"


def build_plan(
    action: str,
    data_root: Union[str, os.PathLike],
    runs: Iterable[RunLayout],
    target: Optional[Callable[[RunLayout], RunLayout]] = None,
    target_root: Optional[Union[str, os.PathLike]] = None,
    rewrite: bool = False,
    verb: str = "",
) -> Plan:
    """Plan ``action`` for every data type of each run.

    Args:
        action: move, copy, trash or purge.
        data_root: the source data root.
        runs: the runs (their task, date and name are checked: no ``..``, no ``/abs``).
        target: maps a run to its destination layout (move/copy).
        target_root: the destination data root when it differs from ``data_root``.
        rewrite: rewrite each moved/copied run's ``run.json`` to name its new place.
        verb: the word shown to users ("archive", "delete" ...).

    Raises:
        UnsafePathError: a run's task, date or name is not a safe path part.
    """
    if action not in ACTIONS:
        raise RLAError(
            f"Unknown action {action!r}",
            expected=f"one of {', '.join(ACTIONS)}",
            found=repr(action),
            fix="use a listed action",
        )
    plan = Plan(
        action,
        Path(data_root),
        target_root=Path(target_root) if target_root else None,
        rewrite=rewrite,
        verb=verb or action,
    )
    for run in runs:
        check_layout(run)
        dest = target(run) if target is not None else None
        if dest is not None:
            check_layout(dest)
        run_plan = RunPlan(run, action, target=dest)
        fill_run_plan(plan, run_plan)
        plan.runs.append(run_plan)
    return plan
