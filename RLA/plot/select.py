"""Select stage of a plot: the runs each reg matches, checked for one task and known split keys."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from RLA.errors import RunNotFoundError
from RLA.plot.checks import check_split_keys, check_tasks, with_task_key
from RLA.query.selection import RunRow
from RLA.text import count


@dataclass(frozen=True)
class RunQuery:
    """Which runs a plot is about.

    Attributes:
        data_root: the database root.
        task: the task (``None``: every task; runs of several tasks need ``all_tasks``).
        regs: globs on ``YYYY/MM/DD/<name>``; each selects runs (one group each with
            ``regs2legends``).
        split_keys: hyper-parameters (or run columns) whose values define the groups.
        where: a query expression further filtering the runs.
        hp_filter_dict: ``{key: [allowed values]}`` (values compared as text).
        regs2legends: one legend per reg (split keys are not checked then).
        all_tasks: group runs of several tasks by task instead of refusing them.
        summarize_res: print the runs each reg found.
    """

    data_root: Union[str, os.PathLike]
    task: Optional[str]
    regs: Sequence[str]
    split_keys: Sequence[str]
    where: Optional[str] = None
    hp_filter_dict: Optional[Dict[str, Sequence[Any]]] = None
    regs2legends: Optional[Sequence[str]] = None
    all_tasks: bool = False
    summarize_res: bool = False


@dataclass
class Selected:
    """The selected runs: per reg, all of them once (in first-seen order), the split keys to use."""

    runs_per_reg: List[List[RunRow]]
    rows: List[RunRow]
    split_keys: List[str]
    key_notes: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)


def reg_list(regs: Union[None, str, Sequence[str]]) -> List[str]:
    """``regs`` as a list (one glob is one reg; none or empty selects every run)."""
    return [regs] if isinstance(regs, str) else list(regs or ["*"])


def _allowed(row: RunRow, hp_filter_dict: Dict[str, Sequence[Any]]) -> bool:
    return all(str(row.params.get(k)) in {str(v) for v in vs} for k, vs in hp_filter_dict.items())


def match_regs(runs: Sequence[RunRow], query: RunQuery) -> List[List[RunRow]]:
    """The runs each reg of ``query`` matches (and ``hp_filter_dict`` allows), in reg order."""
    from RLA.query.selection import match_selector

    runs_per_reg = []
    for reg in reg_list(query.regs):
        picked = [row for row in runs if match_selector(row.layout, reg)]
        if query.hp_filter_dict:
            picked = [row for row in picked if _allowed(row, query.hp_filter_dict)]
        runs_per_reg.append(picked)
        if query.summarize_res:
            print(f"for regex {reg}, we have the following logs:")
            for row in picked:
                print("find log", row.layout.log_dir)
    return runs_per_reg


def select(query: RunQuery, stacklevel: int = 1) -> Selected:
    """Select the runs of ``query`` and check them before anything is loaded.

    Args:
        query: the runs to plot.
        stacklevel: the frame (1: the caller) each skipped damaged run is reported at, as a
            :class:`RLA.query.BrokenRunWarning`.

    Raises:
        RunNotFoundError: no run matches (or the task does not exist).
        QueryError: a bad ``where``, runs of several tasks without ``all_tasks``, a split key
            no selected run has.
    """
    from RLA.query import select_runs
    from RLA.query.curves import warn_skipped

    selection = select_runs(Path(query.data_root), task=query.task, where=query.where)
    warn_skipped(selection.skipped, stacklevel=stacklevel + 2)
    runs_per_reg = match_regs(selection.runs, query)
    rows = list({row.index: row for rows in runs_per_reg for row in rows}.values())
    if not rows:
        raise RunNotFoundError(
            f"No run matches regs {reg_list(query.regs)} in task {query.task!r}",
            expected="at least one run",
            found=f"0 of {count(selection.scanned, 'run')}",
            fix="check regs, where and the task name",
        )
    tasks = check_tasks(rows, query.task, query.all_tasks, query.regs2legends, query.split_keys)
    split_keys = with_task_key(query.split_keys, tasks, query.all_tasks)
    key_notes = [] if query.regs2legends is not None else check_split_keys(rows, split_keys)
    return Selected(runs_per_reg, rows, split_keys, key_notes, list(selection.skipped))
