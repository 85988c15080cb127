"""The original Tester's remaining methods, on a face class over RLA's ExperimentManager.

:class:`Tester` adds the names scripts of the original call (``log_file_finder``,
``log_name_formatter``, ``log_file_copy``, ``update_fph``, ``task_gen``...) as thin
delegations; ``exp_manager`` is an instance of it. TensorFlow-only methods raise
:class:`RLA.errors.BackendNotInstalledError`. Core modules never import this one.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from RLA.const import LOG_NAME_FORMAT_VERSION
from RLA.easy_tf import tensorflow_only
from RLA.errors import RLAError, RunNotFoundError
from RLA.manager.experiment import ExperimentManager
from RLA.naming import TIME_FORMAT, format_info

_TB = "record scalars with logger.record_tabular; for graphs/images use logger.get_tbx_writer()"


def _parse_record_date(record_date: str) -> _dt.datetime:
    try:
        return _dt.datetime.strptime(str(record_date).replace("\\", "/"), "%Y/%m/%d/%H-%M-%S-%f")
    except ValueError:
        raise RunNotFoundError(
            f"Bad record date {record_date!r}",
            expected="YYYY/MM/DD/HH-MM-SS-ffffff",
            found=repr(record_date),
            fix="copy the date part of the run's index",
        ) from None


class Tester(ExperimentManager):
    """RLA's manager under the original's class name, with the original's remaining methods."""

    #: The run names RLA writes are the original's V1 names (``<time>_<ip>_&k=v``).
    log_name_format_version: str | None = LOG_NAME_FORMAT_VERSION.V1
    last_record_fph_time: float | None = None

    add_graph = staticmethod(tensorflow_only("Tester.add_graph", _TB))
    add_summary_to_logger = staticmethod(tensorflow_only("Tester.add_summary_to_logger", _TB))
    dict_to_table_text_summary = staticmethod(
        tensorflow_only(
            "Tester.dict_to_table_text_summary",
            "the hyper-parameters are already in TensorBoard's text tab and "
            "run.json; use logger.get_tbx_writer().add_text(name, text) for other tables",
        )
    )

    @classmethod
    def load_tester(
        cls, record_date: str, task_table_name: str, log_root: str, trust_pickles: bool = False
    ) -> Any:
        """polixir's name: a past run's state (``hyper_param``, ``custom_data``...), read without unpickling."""
        from RLA.loader.past_run import PastRun

        return PastRun.find(log_root, task_table_name, record_date, trust_pickles=trust_pickles)

    # ----------------------------------------------------------------- names
    @classmethod
    def log_file_finder(
        cls,
        record_date: str,
        task_table_name: str = "train",
        file_root: str = "../checkpoint/",
        log_type: str = "dir",
    ) -> tuple[str, str]:
        """``(date folder, entry)`` of the run recorded at ``record_date`` under ``file_root/<task>``.

        ``log_type`` ``'dir'`` looks for a folder, ``'files'`` for a file; ``entry`` is ``''``
        when nothing matches (as in the original).
        """
        if log_type not in ("dir", "files"):
            raise RLAError(
                f"Unknown log_type {log_type!r}",
                expected="'dir' or 'files'",
                found=repr(log_type),
                fix="pass log_type='dir' (log, code, checkpoint...) or 'files' (archive_tester)",
            )
        when = _parse_record_date(record_date)
        directory = str(Path(file_root) / task_table_name / when.strftime("%Y/%m/%d"))
        folder = Path(directory)
        wanted = when.strftime(TIME_FORMAT)
        entries = sorted(folder.iterdir()) if folder.is_dir() else []
        for entry in entries:
            if entry.name.startswith(wanted) and entry.is_dir() == (log_type == "dir"):
                return directory, entry.name
        return directory, ""

    def get_version_num(self) -> str | None:
        """The run-name format version (``'v1'``; ``None`` meant the legacy space-separated names)."""
        return getattr(self, "log_name_format_version", None)

    def record_date_to_str(self, record_date: _dt.datetime) -> str:
        """``HH-MM-SS-ffffff`` of ``record_date``."""
        return record_date.strftime(TIME_FORMAT)

    def auto_parse_info(self) -> str:
        """``k1=v1&k2=v2`` of the tracked hyper-parameters, as written in the run's name."""
        policy = self.redaction
        return format_info([(k, policy.redact_mapping(v, k)) for k, v in self._tracked_values()])[1:]

    @property
    def info(self) -> str:
        """``&`` + :meth:`auto_parse_info` (the original's attribute)."""
        return "&" + self.auto_parse_info()

    def log_name_formatter(self, prefix: str, record_date: _dt.datetime) -> str:
        """``<prefix>/<YYYY/MM/DD>/<name>``: the current run's real name at its own date, else the
        name the tracked hyper-parameters give at ``record_date`` (legacy spaces for version None)."""
        layout = self.layout
        date = record_date.strftime("%Y/%m/%d")
        if layout is not None and self.record_date == record_date:
            return f"{prefix}/{date}/{layout.name}"
        version = self.get_version_num()
        if version not in (None, LOG_NAME_FORMAT_VERSION.V1):
            raise RLAError(
                f"Unknown run-name version {version!r}",
                expected="'v1' or None",
                found=repr(version),
                fix="set log_name_format_version = 'v1'",
            )
        sep = " " if version is None else "_"
        return f"{prefix}/{date}/{self.record_date_to_str(record_date)}{sep}{self.ipaddr}{sep}{self.info}"

    def task_gen(self, task_pattern_list: Sequence[str]) -> str:
        """``'-'.join(task_pattern_list)``."""
        return "-".join(task_pattern_list)

    # ------------------------------------------------------------ recording
    def update_fph(self, cum_epochs: float) -> float | None:
        """Record ``fph`` = ``cum_epochs`` per hour since the first call (that call starts the clock)."""
        from RLA.easy_log import logger

        now = time.monotonic()
        if self.last_record_fph_time is None:
            self.last_record_fph_time = now
            return None
        hours = max(now - self.last_record_fph_time, 1e-9) / 3600
        fph = cum_epochs / hours
        logger.record_tabular("fph", fph)
        logger.dump_tabular()
        return fph

    def print_large_memory_variable(self, top: int = 10) -> list[tuple[str, int]]:
        """The caller's largest variables (fixed: the original listed its own locals)."""
        from RLA.trackers.memory_used_recorder import print_large_memory_variable

        return print_large_memory_variable(top)

    # ---------------------------------------------------------------- copies
    def log_file_copy(self, source_tester: Any) -> None:
        """Continue ``source_tester``'s logs, checkpoints and results in the current run.

        ``source_tester`` is a run from :meth:`load_tester` (or another manager with a run).
        Rows after its newest checkpoint are cut, files are linked, never moved; its
        ``custom_data`` is copied. The hyper-parameters stay the current ones.
        """
        from RLA.loader import ExperimentLoader

        layout = getattr(source_tester, "layout", None)
        if layout is None:
            raise RLAError(
                "log_file_copy() needs a past run",
                expected="exp_manager.load_tester(record_date, task, data_root)",
                found=repr(source_tester),
                fix="load the run first",
            )
        loader = ExperimentLoader(manager=self).config(layout.task, layout.record_date, layout.data_root)
        loader.fork_log_files(hp_to_overwrite=list(self.hyper_param))
        for key, value in (getattr(source_tester, "custom_data", None) or {}).items():
            self.custom_data[key] = value
        self.save_state()


def _current() -> Tester:
    from RLA.easy_log.tester import exp_manager

    return exp_manager


def import_hyper_parameters(task_table_name: str, record_date: str) -> Any:
    """The past run's hyper-parameters as an ``argparse.Namespace`` (deprecated in the original)."""
    import argparse

    manager = _current()
    return argparse.Namespace(
        **manager.load_tester(record_date, task_table_name, str(manager.data_root)).hyper_param
    )


def load_from_record_date(task_table_name: str, record_date: str) -> tuple[int, dict[str, Any]]:
    """``(step, model_dict)`` of the past run's newest checkpoint; the time-step becomes that step."""
    from RLA.manager.checkpointing import split_state

    manager = _current()
    loaded = manager.load_tester(record_date, task_table_name, str(manager.data_root)).load_checkpoint()
    manager.set_timestep(loaded.step)
    return loaded.step, split_state(loaded)[0]


def fork_tester_log_files(task_table_name: str, record_date: str) -> None:
    """Continue the past run in the current one and take its hyper-parameters (the original's fork)."""
    from RLA.loader import ExperimentLoader

    manager = _current()
    ExperimentLoader(manager=manager).config(task_table_name, record_date, manager.data_root).fork_log_files()


__all__ = ["Tester", "fork_tester_log_files", "import_hyper_parameters", "load_from_record_date"]
