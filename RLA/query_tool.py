"""The original ``RLA.query_tool``: experiments of a table by glob, per data type.

``experiment_data_query(data_root, task, reg, data_type)`` returns
``{'YYYY/MM/DD/HH-MM-SS-ffffff': result}``; the runs are selected by RLA's query (the glob
is on ``YYYY/MM/DD/<name>``). The ``archive_tester`` result's ``exp_manager`` is the run's
state read without unpickling (``hyper_param``, ``custom_data``...): the original
unpickled every file of a query, which runs any code a file holds.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

from RLA.easy_log.const import ARCHIVE_TESTER, CHECKPOINT, HYPARAMETER, LOG, OTHER_RESULTS, TMP_DATA
from RLA.errors import RLAError, RunNotFoundError

_INDEX_RE = re.compile(r"\d{4}/\d{2}/\d{2}/\d{2}-\d{2}-\d{2}-\d{6}")


class BasicQueryResult:
    """A query hit: the folder (or state file without suffix) of one run's data type."""

    def __init__(self, dirname: str) -> None:
        self.dirname = dirname


class ArchiveQueryResult(BasicQueryResult):
    """``exp_manager``: the run's resume state (``hyper_param``, ``custom_data``, ``layout``)."""

    def __init__(self, exp_manager: Any, dirname: str) -> None:
        super().__init__(dirname)
        self.exp_manager = exp_manager


class LogQueryResult(BasicQueryResult):
    """A log folder that holds ``progress.csv``."""


class HyperParamResult(BasicQueryResult):
    """The run's hyper-parameters."""

    def __init__(self, dirname: str, hyper_param: Dict[str, Any]) -> None:
        super().__init__(dirname)
        self.hyper_param = hyper_param


class CkpResult(BasicQueryResult):
    """``all_ckps``: the checkpoint file names, oldest first."""

    def __init__(self, dirname: str, all_ckps: List[str]) -> None:
        super().__init__(dirname)
        self.all_ckps = all_ckps


class OtherQueryResult(BasicQueryResult):
    """Files of ``results/`` or ``tmp_data/``: ``location[i]`` was changed at ``ctime[i]``."""

    def __init__(self, dirname: str, ctime: List[float], location: List[str]) -> None:
        super().__init__(dirname)
        self.ctime = ctime
        self.location = location


def extract_valid_index(regex: str) -> Optional[str]:
    """The ``YYYY/MM/DD/HH-MM-SS-ffffff`` part of a path or pattern, or None."""
    match = _INDEX_RE.search(str(regex).replace("\\", "/"))
    return match.group(0) if match else None


def _files(folder: Path) -> OtherQueryResult:
    found = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.stat().st_mtime)
    return OtherQueryResult(str(folder), [p.stat().st_mtime for p in found], [str(p) for p in found])


def _result(row: Any, data_type: str) -> Optional[BasicQueryResult]:
    from RLA.loader.past_run import PastRun, _read_state

    layout = row.layout
    if data_type == LOG:
        return LogQueryResult(str(layout.log_dir)) if (layout.log_dir / "progress.csv").is_file() else None
    if data_type == ARCHIVE_TESTER:
        try:
            past = PastRun(layout, _read_state(layout))
        except RLAError as exc:
            warnings.warn(f"skipped {layout.index}: {exc}", RuntimeWarning, stacklevel=4)
            return None
        return ArchiveQueryResult(past, str(layout.archive_tester_file.with_suffix("")))
    if data_type == HYPARAMETER:
        return HyperParamResult(str(layout.log_dir), dict(row.params)) if row.params else None
    if data_type == CHECKPOINT:
        folder = layout.checkpoint_dir
        if not folder.is_dir():
            return None
        names = sorted(os.listdir(folder), key=lambda n: (os.stat(folder / n).st_mtime, n))
        return CkpResult(str(folder), [n for n in names if not n.startswith(".")])
    folder = layout.type_root(data_type) / layout.task / layout.date / layout.name
    return _files(folder) if folder.is_dir() else None


def experiment_data_query(
    data_root: str, task_table_name: str, reg: str, data_type: str, single_res_filter: bool = False
) -> Dict[str, BasicQueryResult]:
    """``{index: result}`` of the runs of ``task_table_name`` matching the glob ``reg``."""
    from RLA.query import select_runs

    del single_res_filter  # the original's flag; every hit is one run here
    if data_type not in (
        LOG,
        ARCHIVE_TESTER,
        HYPARAMETER,
        CHECKPOINT,
        OTHER_RESULTS,
        TMP_DATA,
        "code",
        "replay",
    ):
        raise RLAError(
            f"Unknown data type {data_type!r}",
            expected="log, archive_tester, hyperparameter, checkpoint, results, tmp_data, code or replay",
            found=repr(data_type),
            fix="use a constant of RLA.easy_log.const",
        )
    if not Path(data_root).is_dir():
        return {}
    results: Dict[str, BasicQueryResult] = {}
    for row in select_runs(data_root, task=task_table_name or None, regex=[reg]).runs:
        hit = _result(row, data_type)
        if hit is not None:
            results[row.layout.record_date] = hit
    return results


def single_experiment_query(
    data_root: str, task_table_name: str, log_date: str, data_type: str
) -> BasicQueryResult:
    """The one run recorded at ``log_date`` (``YYYY/MM/DD/HH-MM-SS-ffffff``).

    Raises:
        RunNotFoundError: no run, or several runs, match.
    """
    hits = experiment_data_query(data_root, task_table_name, f"{log_date}*", data_type)
    if len(hits) != 1:
        raise RunNotFoundError(
            f"{len(hits)} runs of {task_table_name!r} match {log_date!r} for {data_type}",
            expected="exactly one run",
            found=", ".join(sorted(hits)) or "none",
            fix="give the full YYYY/MM/DD/HH-MM-SS-ffffff record date",
        )
    return next(iter(hits.values()))


__all__ = [
    "BasicQueryResult",
    "ArchiveQueryResult",
    "LogQueryResult",
    "HyperParamResult",
    "CkpResult",
    "OtherQueryResult",
    "extract_valid_index",
    "experiment_data_query",
    "single_experiment_query",
]
