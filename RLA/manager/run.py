"""The run value (its layout and its ``run.json`` record) and the one factory that makes it.

:class:`RunFactory` is the only code that claims a run directory (exclusively, see
:func:`RLA.manager.claim.claim_run`) and writes a run's first ``run.json``; it also reopens
an existing run for a process that continues it. Everything else receives the :class:`Run`
it made and updates the record through :meth:`RunRecord.update`.
"""

from __future__ import annotations

import datetime as _dt
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from RLA.layout import RunLayout
from RLA.manager import run_info as ri
from RLA.manager.claim import Clock, claim_run
from RLA.manager.host import host_ip, package_versions, process_facts, redacted_argv
from RLA.redaction import RedactionPolicy


class RunRecord:
    """A run's ``run.json``: the record in memory, rewritten atomically on every change.

    One writer at a time: the heartbeat thread and the training thread both update it, and a
    write serializes the dict another update would be changing.
    """

    def __init__(self, path: Path, redaction: RedactionPolicy, info: Optional[Dict[str, Any]] = None) -> None:
        self.path = path
        self.redaction = redaction
        #: The record as last written (a live dict: read it, change it with :meth:`update`).
        self.info: Dict[str, Any] = info if info is not None else {}
        self._lock = threading.RLock()

    def update(self, **fields: Any) -> Dict[str, Any]:
        """Set ``fields`` and rewrite the file (atomic, redacted); returns a copy of the record."""
        with self._lock:
            self.info.update(fields)
            ri.write_run_info(self.path, self.info, self.redaction)
            return dict(self.info)

    def replace(self, info: Dict[str, Any]) -> None:
        """Make ``info`` the whole record and write it."""
        with self._lock:
            self.info = info
            ri.write_run_info(self.path, info, self.redaction)


@dataclass
class Run:
    """One run: where its data lives and its record.

    Attributes:
        layout: the run's paths.
        started: its start time (the index's date and time).
        record: its ``run.json``.
    """

    layout: RunLayout
    started: _dt.datetime
    record: RunRecord

    @property
    def redaction(self) -> RedactionPolicy:
        """What every artifact of this run hides."""
        return self.record.redaction

    @property
    def index(self) -> str:
        return self.layout.index

    def relocate(self, layout: RunLayout) -> None:
        """The same run at other paths (its copy in a moved database): the record follows."""
        self.layout = layout
        self.record.path = layout.run_info_file


@dataclass
class RunSpec:
    """What the manager knows about the run to create or continue (the record's own fields).

    ``tracked`` holds the tracked ``(key, value)`` pairs that name a new run; the other fields
    go into ``run.json`` as they are.
    """

    hyper_params: Dict[str, Any]
    bookkeeping: Dict[str, Any]
    tracked_keys: List[str]
    tracked: Sequence[Tuple[str, Any]] = ()
    heartbeat_interval: float = ri.DEFAULT_HEARTBEAT_INTERVAL
    config: Optional[Dict[str, Any]] = None
    total_steps: Optional[int] = None


def initial_record(
    layout: RunLayout, when: _dt.datetime, spec: RunSpec, policy: RedactionPolicy
) -> Dict[str, Any]:
    """The first ``run.json`` of a new run (status ``running``)."""
    facts = process_facts()
    return {
        "format_version": ri.FORMAT_VERSION,
        "index": layout.index,
        "task": layout.task,
        "name": layout.name,
        "date": layout.date,
        "record_date": layout.record_date,
        "hyper_params": spec.hyper_params,
        "bookkeeping": spec.bookkeeping,
        "tracked_keys": list(spec.tracked_keys),
        "host": facts["host"],
        "ip": host_ip(),
        "pid": facts["pid"],
        "command": redacted_argv(policy=policy),
        "cwd": facts["cwd"],
        "python": facts["python"],
        "platform": facts["platform"],
        "packages": package_versions(),
        "git": None,
        "start_time": when.astimezone().isoformat(timespec="microseconds"),
        "end_time": None,
        "status": ri.RUNNING,
        "exit_code": None,
        "error": None,
        "heartbeat": ri.now_iso(),
        "heartbeat_interval": spec.heartbeat_interval,
        "parent": None,
        "data_root": str(layout.data_root),
        "config": spec.config,
        "total_steps": spec.total_steps,
    }


class RunFactory:
    """Makes the runs of one task of one data root.

    Args:
        data_root: the database root (resolved).
        task: the task (table) name.
        clock: the source of a new run's start time (tests inject a fixed instant).
        on_reopened: told about a run continued by this process (the query index forgets
            what it knew about it); default: :func:`RLA.query.catalog.mark_changed`.
    """

    def __init__(
        self,
        data_root: Path,
        task: str,
        clock: Clock = _dt.datetime.now,
        on_reopened: Optional[Callable[[Path, Sequence[RunLayout]], None]] = None,
    ) -> None:
        self.data_root = data_root
        self.task = task
        self.clock = clock
        self._on_reopened = on_reopened

    def create(self, spec: RunSpec, redaction: RedactionPolicy) -> Run:
        """Claim a new run directory and write its first ``run.json``.

        The directory is created exclusively under the day's lock, so two runs never share an
        index; the record exists as soon as this returns.

        Raises:
            RunExistsError: no free index (a broken clock).
            OSError: the directory or the record could not be written (the claimed directory
                stays, with a ``crashed`` record when one could still be written).
        """
        tracked = [(key, redaction.redact_mapping(value, key)) for key, value in spec.tracked]
        layout, when = claim_run(self.data_root, self.task, None, host_ip(), tracked, clock=self.clock)
        record = RunRecord(layout.run_info_file, redaction)
        info = initial_record(layout, when, spec, redaction)
        try:
            record.replace(info)
        except BaseException as exc:
            _record_failed_start(record, info, exc)
            raise
        return Run(layout, when, record)

    def reopen(self, layout: RunLayout, spec: RunSpec, redaction: RedactionPolicy, **fields: Any) -> Run:
        """The existing run ``layout``, its ``run.json`` rewritten as running in this process.

        Raises:
            RunNotFoundError: the run has no ``run.json``.
        """
        from RLA.naming import index_time

        info = ri.read_run_info(layout.run_info_file)
        facts = process_facts()
        info.update(
            status=ri.RUNNING,
            end_time=None,
            exit_code=None,
            error=None,
            pid=facts["pid"],
            host=facts["host"],
            heartbeat=ri.now_iso(),
            hyper_params=spec.hyper_params,
            bookkeeping=spec.bookkeeping,
            tracked_keys=list(spec.tracked_keys),
            **fields,
        )
        record = RunRecord(layout.run_info_file, redaction)
        record.replace(info)
        self._reopened(layout)
        return Run(layout, index_time(layout.index), record)

    def _reopened(self, layout: RunLayout) -> None:
        if self._on_reopened is None:
            from RLA.manager.plugins import tell_run_changed

            tell_run_changed(self.data_root, [layout])  # the index may hold it as settled and ended
        else:
            self._on_reopened(self.data_root, [layout])


def _record_failed_start(record: RunRecord, info: Mapping[str, Any], exc: BaseException) -> None:
    """Write a ``crashed`` (``killed`` on Ctrl-C) record for a run whose first record failed."""
    import sys

    status, code = (ri.KILLED, 130) if isinstance(exc, KeyboardInterrupt) else (ri.CRASHED, 1)
    ended = dict(
        info, status=status, exit_code=code, error=f"{type(exc).__name__}: {exc}", end_time=ri.now_iso()
    )
    try:
        record.replace(ended)
    except Exception as second:  # noqa: BLE001 - the first error is the one the caller raises
        print(
            f"RLA: while recording the failed start of run {info.get('index')}: {type(second).__name__}: {second}",
            file=sys.stderr,
        )


__all__ = ["Run", "RunFactory", "RunRecord", "RunSpec", "initial_record"]
