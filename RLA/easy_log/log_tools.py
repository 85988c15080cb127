"""The original batch tools (``DeleteLogTool``, ``ArchiveLogTool``, ``MigrateLogTool``,
``ViewLogTool``, ``PrettyPlotterTool``) over RLA's query and plans (:mod:`RLA.ops`).

``regex`` is the original's glob on ``YYYY/MM/DD/<name>``. What changed, on purpose:
deletes go to ``<data_root>/.trash/`` (``rla trash list|restore|empty`` manage it), every data type
of a run moves together, and no pickle is ever loaded (``PrettyPlotterTool`` reads the
hyper-parameters the query reads). Counts are the original's: matched (run x data type).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence

import numpy as np

from RLA.easy_log.const import ARCHIVED_TABLE, default_log_types
from RLA.fs import atomic_write_text, json_default
from RLA.layout import RunLayout

_INDEX_RE = re.compile(r"\d{4}/\d{2}/\d{2}/\d{2}-\d{2}-\d{2}-\d{6}")


class Filter:
    """What ``DeleteLogTool`` deletes: every match (``ALL``) or short runs (``SMALL_TIMESTEP``)."""

    ALL = "all"
    SMALL_TIMESTEP = "small_ts"

    def __init__(self) -> None:
        self.type = Filter.ALL
        self.timstep_bound = np.inf

    def config(self, type: str, timstep_bound: float) -> None:
        """Choose the filter and the largest time-step that counts as "small"."""
        self.type = type
        self.timstep_bound = timstep_bound


def _ask(question: str, skip_ask: bool) -> bool:
    return skip_ask or input(question).strip() == "y"


class BasicLogTool:
    """Selection shared by the tools: runs of ``task_table_name`` whose path matches ``regex``."""

    proj_root: str = "."
    task_table_name: str = ""

    def __init__(self, optional_log_type: Optional[Sequence[str]] = None) -> None:
        self.log_types = list(default_log_types) + list(optional_log_type or [])

    @staticmethod
    def is_valid_index(regex: str) -> Optional[str]:
        """The ``YYYY/MM/DD/HH-MM-SS-ffffff`` inside ``regex``, or None."""
        match = _INDEX_RE.search(regex.replace("\\", "/"))
        return match.group(0) if match else None

    def _rows(self, regex: str) -> List[Any]:
        from RLA.query import select_runs

        if not Path(self.proj_root).is_dir():
            return []
        return list(select_runs(self.proj_root, task=self.task_table_name or None, regex=[regex]).runs)

    def _runs(self, regex: str) -> List[RunLayout]:
        return [row.layout for row in self._rows(regex)]

    def _find_small_timestep_log(
        self,
        proj_root: str,
        task_table_name: str,
        regex: str,
        timstep_upper_bound: float = np.inf,
        timestep_lower_bound: float = 0,
    ) -> List[List[str]]:
        """``[[index, log_dir], ...]`` of runs whose largest time-step is within the bounds."""
        self.proj_root, self.task_table_name = proj_root, task_table_name
        found = []
        for row in self._rows(regex):
            step = float(row.record.time_step or 0)
            if timestep_lower_bound <= step <= timstep_upper_bound:
                found.append([row.layout.record_date, str(row.layout.log_dir)])
        return found

    def _count(self, runs: Iterable[RunLayout], types: Optional[Sequence[str]] = None) -> int:
        wanted = set(types if types is not None else self.log_types) | {"replay"}
        return sum(1 for run in runs for kind in run.existing_paths() if kind in wanted)


class DeleteLogTool(BasicLogTool):
    """Delete the matching runs (every data type) into ``<proj_root>/.trash/``."""

    def __init__(
        self, proj_root: str, task_table_name: str, regex: str, filter: Filter, *args: Any, **kwargs: Any
    ) -> None:
        self.proj_root, self.task_table_name, self.regex = proj_root, task_table_name, regex
        if not isinstance(filter, Filter):
            raise TypeError(f"filter must be a log_tools.Filter, not {type(filter).__name__}")
        self.filter = filter
        self.small_timestep_regs: List[List[str]] = []
        super().__init__(*args, **kwargs)

    def _delete(self, runs: List[RunLayout], show: bool, delete_log_types: Optional[Sequence[str]]) -> int:
        from RLA.ops import plan_delete

        count = self._count(runs, delete_log_types)
        plan = plan_delete(self.proj_root, runs)
        if delete_log_types is not None:
            for run_plan in plan.runs:
                run_plan.steps = [s for s in run_plan.steps if s.data_type in delete_log_types]
        print(plan.describe())
        if not show:
            plan.apply()
        return count

    def delete_related_log(
        self, skip_ask: bool = False, delete_log_types: Optional[Sequence[str]] = None
    ) -> int:
        """Delete every run matching ``regex``; returns the matched (run x data type) count."""
        runs = self._runs(self.regex)
        self._delete(runs, True, delete_log_types)
        if not _ask("delete these files? (y/n)", skip_ask):
            return 0
        return self._delete(runs, False, delete_log_types)

    def delete_small_timestep_log(self, skip_ask: bool = False) -> int:
        """Delete the matching runs whose largest time-step is at most the filter's bound."""
        self.small_timestep_regs = self._find_small_timestep_log(
            self.proj_root, self.task_table_name, self.regex, timstep_upper_bound=self.filter.timstep_bound
        )
        indexes = {reg for reg, _ in self.small_timestep_regs}
        runs = [run for run in self._runs(self.regex) if run.record_date in indexes]
        self._delete(runs, True, None)
        if not _ask("delete these files? (y/n)", skip_ask):
            return 0
        return self._delete(runs, False, None)


class ArchiveLogTool(BasicLogTool):
    """Copy the matching runs to ``<proj_root>/arc/`` (the sources stay, like the original)."""

    def __init__(
        self,
        proj_root: str,
        task_table_name: str,
        regex: str,
        archive_table_name: str = ARCHIVED_TABLE,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.proj_root, self.task_table_name, self.regex = proj_root, task_table_name, regex
        self.archive_table_name = archive_table_name
        super().__init__(*args, **kwargs)

    def archive_log(self, skip_ask: bool = False) -> int:
        """Copy every data type of each matching run; returns the number of runs copied."""
        from RLA.ops import plan_archive

        if self.archive_table_name != ARCHIVED_TABLE:
            raise ValueError(f"RLA archives into {ARCHIVED_TABLE!r} only; got {self.archive_table_name!r}")
        plan = plan_archive(self.proj_root, self._runs(self.regex), copy=True)
        print(plan.describe())
        if not _ask("archive these files? (y/n) \n ", skip_ask):
            return 0
        return sum(1 for run in plan.apply() if run.result == "done")


class MigrateLogTool(BasicLogTool):
    """Copy the matching runs to another task (and data root); their ``run.json`` follows."""

    def __init__(
        self,
        proj_root: str,
        task_table_name: str,
        regex: str,
        target_task_table_name: str,
        target_proj_root: Optional[str] = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.proj_root, self.task_table_name, self.regex = proj_root, task_table_name, regex
        self.target_task_table_name = target_task_table_name
        self.target_proj_root = target_proj_root
        super().__init__(*args, **kwargs)

    def migrate_log(self, skip_ask: bool = False) -> int:
        """Copy every data type of each matching run; returns the number of runs copied."""
        from RLA.ops import plan_migrate

        plan = plan_migrate(
            self.proj_root,
            self._runs(self.regex),
            to_task=self.target_task_table_name,
            to_data_root=self.target_proj_root,
        )
        print(plan.describe())
        if not _ask("migrate these files? (y/n) \n ", skip_ask):
            return 0
        return sum(1 for run in plan.apply() if run.result == "done")


class ViewLogTool(BasicLogTool):
    """Print the hyper-parameters (``backup.txt``) of the matching runs that logged a step."""

    def __init__(self, proj_root: str, task_table_name: str, regex: str, *args: Any, **kwargs: Any) -> None:
        self.proj_root, self.task_table_name, self.regex = proj_root, task_table_name, regex
        super().__init__(*args, **kwargs)

    def view_log(self, skip_ask: bool = False) -> List[str]:
        """Print each run's ``backup.txt`` (or its hyper-parameters); returns the indexes shown."""
        shown = []
        for row in self._rows(self.regex):
            if float(row.record.time_step or 0) < 1:
                continue
            print("view experiments:", row.layout.log_dir)
            if not _ask("press y to view \n ", skip_ask):
                continue
            backup = row.layout.log_dir / "backup.txt"
            text = backup.read_text(errors="replace") if backup.is_file() else ""
            print(text or json.dumps(row.params, indent=2, sort_keys=True, default=json_default))
            shown.append(row.layout.record_date)
        return shown


class PrettyPlotterTool(BasicLogTool):
    """Write ``log/<run>/parameter.json`` (hyper-parameters + ``formatted_log_name``) per run."""

    def __init__(self, proj_root: str, task_table_name: str, regex: str, *args: Any, **kwargs: Any) -> None:
        self.proj_root, self.task_table_name, self.regex = proj_root, task_table_name, regex
        super().__init__(*args, **kwargs)

    def gen_json(self, regex: Optional[str] = None) -> List[Path]:
        """One ``parameter.json`` per matching run (read from the files the query reads)."""
        written = []
        for row in self._rows(regex or self.regex):
            if not row.layout.log_dir.is_dir():
                continue
            params = dict(row.params)
            params["formatted_log_name"] = f"{row.layout.task}/{row.layout.date}/{row.layout.name}"
            target = row.layout.log_dir / "parameter.json"
            atomic_write_text(target, json.dumps(params, indent=4, sort_keys=True, default=json_default))
            print("gen:", target)
            written.append(target)
        return written


__all__ = [
    "Filter",
    "BasicLogTool",
    "DeleteLogTool",
    "ArchiveLogTool",
    "MigrateLogTool",
    "ViewLogTool",
    "PrettyPlotterTool",
]
