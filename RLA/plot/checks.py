"""Refuse plots that would be silently wrong: unknown split keys and runs of several tasks.

A split key that no selected run has used to draw one curve labelled ``algoo=NF``; runs of
several tasks used to be averaged into one curve and cut to the shortest run. Both are now
errors (:class:`RLA.errors.QueryError`, like an unknown name in ``--where``) that say what
the selected runs do have, with a "did you mean" hint.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Sequence

from RLA.errors import QueryError
from RLA.query.selection import RUN_COLUMNS, RunRow
from RLA.text import count

#: The split key that groups runs by task (``all_tasks=True`` / ``rla plot --all-tasks``).
TASK_KEY = "task"


def split_value(row: RunRow, key: str, missing: Any) -> Any:
    """The value a run has for a split key: a hyper-parameter (dotted for nested ones), else a
    run column (``task``, ``host``, ``status`` ...), else ``missing``."""
    if key in row.params:
        return row.params[key]
    if key in RUN_COLUMNS:
        return row.columns()[key]
    return missing


def _shown(names: Sequence[str], limit: int = 12) -> str:
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "") if names else "(none)"


def check_split_keys(rows: Sequence[RunRow], split_keys: Sequence[str]) -> List[str]:
    """Refuse a split key that none of ``rows`` has; note the keys only some runs have.

    Returns:
        One note per key that some runs lack (their curve is labelled ``key=NF``).

    Raises:
        QueryError: a key that is neither a hyper-parameter of a selected run nor a run column.
    """
    counts: Counter = Counter(key for row in rows for key in row.params)
    notes = []
    for key in split_keys:
        if key in RUN_COLUMNS and key not in counts:
            continue
        if key not in counts:
            names = sorted(counts)
            close = difflib.get_close_matches(key, names + list(RUN_COLUMNS), n=1)
            raise QueryError(
                f"No selected run has the split key {key!r}",
                expected=f"a hyper-parameter of the selected runs ({_shown(names)}) "
                f"or a run column ({', '.join(RUN_COLUMNS[:8])} ...)",
                found=f"{key!r} in none of {count(len(rows), 'run')}",
                fix=(f"did you mean {close[0]!r}? " if close else "check the spelling; ")
                + "`rla list` shows the hyper-parameters",
            )
        if counts[key] < len(rows):
            notes.append(
                f"split key {key!r}: {len(rows) - counts[key]} of {count(len(rows), 'run')} lack it "
                f"(grouped as {key}=NF)"
            )
    return notes


def check_tasks(
    rows: Iterable[RunRow],
    task: Optional[str],
    all_tasks: bool,
    regs2legends: Optional[Sequence[str]] = None,
    split_keys: Sequence[str] = (),
) -> List[str]:
    """Refuse averaging runs of several tasks into one curve.

    Args:
        rows: the selected runs.
        task: the task asked for (``None``: every task).
        all_tasks: group by task instead (one curve per task and split-key values).
        regs2legends: legends per reg (grouping by task is not possible then).
        split_keys: ``task`` among them groups by task already (as ``all_tasks``).

    Returns:
        The tasks of ``rows``, sorted.

    Raises:
        QueryError: several tasks without ``all_tasks``, or ``all_tasks`` with ``regs2legends``.
    """
    per_task: Dict[str, int] = Counter(row.layout.task for row in rows)
    tasks = sorted(per_task)
    if task is not None or len(tasks) < 2:
        return tasks
    found = ", ".join(f"{name} ({count(per_task[name], 'run')})" for name in tasks[:10]) + (
        " ..." if len(tasks) > 10 else ""
    )
    if not all_tasks and (TASK_KEY not in split_keys or regs2legends is not None):
        raise QueryError(
            f"The selected runs belong to {count(len(tasks), 'task')}",
            expected="runs of one task (the curves of different tasks are not comparable, and "
            "averaging them would cut every run to the shortest)",
            found=found,
            fix=f"pick one task: task_table_name={tasks[0]!r} (rla plot --task {tasks[0]}), or "
            "all_tasks=True (rla plot --all-tasks) for one curve per task",
        )
    if all_tasks and regs2legends is not None:
        raise QueryError(
            "all_tasks=True cannot be combined with regs2legends",
            expected="split_keys grouping (each task becomes its own curve)",
            found=f"regs2legends={list(regs2legends)!r} over {found}",
            fix="drop regs2legends, or plot one task at a time",
        )
    return tasks


def with_task_key(split_keys: Sequence[str], tasks: Sequence[str], all_tasks: bool) -> List[str]:
    """``split_keys`` with ``task`` first when runs of several tasks are grouped by task."""
    keys = list(split_keys)
    if all_tasks and len(tasks) > 1 and TASK_KEY not in keys:
        keys.insert(0, TASK_KEY)
    return keys
