"""The life of the manager's current run: start, continue, heartbeat and end, services told in order."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from RLA.layout import ARCHIVE_TESTER, DIR_TYPES, RunLayout
from RLA.manager import run_info as ri
from RLA.manager.lifecycle import Heartbeat, exit_watcher
from RLA.manager.logger_api import LoggerAPI
from RLA.manager.run import Run, RunFactory, RunSpec
from RLA.manager.services import Lifecycle, describe
from RLA.redaction import RedactionPolicy


def make_dirs(layout: RunLayout) -> None:
    """Create every data type's folder of the run (and the resume state's folder)."""
    for data_type in DIR_TYPES:
        layout.path(data_type).mkdir(parents=True, exist_ok=True)
    layout.path(ARCHIVE_TESTER).parent.mkdir(parents=True, exist_ok=True)


def announce(logger: LoggerAPI, layout: RunLayout) -> None:
    """Log where the run's data lives."""
    logger.info(f"RLA run {layout.index}")
    for data_type in DIR_TYPES:
        logger.info(f"{data_type} dir: {layout.path(data_type)}")


class Runner:
    """Starts, continues and ends one run at a time.

    Args:
        logger: the logger API (the run's folders are announced, finish warnings written and
            the logger closed through it).
        lifecycle: the services told about the run's events.
        open_logs: opens the logger on a run's log folder.
        save_state: writes a run's resume state.
    """

    def __init__(
        self,
        logger: LoggerAPI,
        lifecycle: Lifecycle,
        open_logs: Callable[[Run], None],
        save_state: Callable[[Run], None],
    ) -> None:
        self.logger = logger
        self.lifecycle = lifecycle
        self._open_logs = open_logs
        self._save_state = save_state
        #: The current run (the last one once it has finished); ``None`` before the first.
        self.run: Optional[Run] = None
        #: The current run has started and not finished.
        self.active = False
        self._heartbeat: Optional[Heartbeat] = None

    def forget(self) -> None:
        """No current run any more (a new configuration); the run must have finished."""
        self.run = None

    def start(self, factory: RunFactory, spec: RunSpec, redaction: RedactionPolicy, interval: float) -> Run:
        """Create a new run and bring it up: folders, logger, services, resume state, heartbeat.

        A failure after the claim ends the run as ``crashed`` (``killed`` on Ctrl-C) with the
        error in run.json, then is raised.
        """
        self.run = None
        run = factory.create(spec, redaction)
        self.run, self.active = run, True
        try:
            make_dirs(run.layout)
            self._open_logs(run)
            self.lifecycle.start(run)
            self._go_live(run, interval)
            announce(self.logger, run.layout)
        except BaseException as exc:
            self._end_failed_start(exc)
            raise
        return run

    def reopen(self, run: Run, interval: float) -> Run:
        """Continue ``run`` (reopened by the factory) in this process: logger, resume state, heartbeat."""
        self.run, self.active = run, True
        self._open_logs(run)
        self._go_live(run, interval)
        return run

    def _go_live(self, run: Run, interval: float) -> None:
        self._save_state(run)
        self._heartbeat = Heartbeat(self._beat, interval)
        exit_watcher.watch(self)

    def _beat(self) -> None:
        run = self.run
        if run is not None and self.active:
            run.record.update(heartbeat=ri.now_iso())
            self.lifecycle.heartbeat(run)

    def _end_failed_start(self, exc: BaseException) -> None:
        """End the run whose start failed; a second failure is printed (the first is raised)."""
        status, code = (ri.KILLED, 130) if isinstance(exc, KeyboardInterrupt) else (ri.CRASHED, 1)
        try:
            self.finish(status=status, exit_code=code, error=describe(exc))
        except Exception as second:  # noqa: BLE001 - the first error is the one to raise
            index = self.run.index if self.run else None
            print(
                f"RLA: while recording the failed start of run {index}: {describe(second)}", file=sys.stderr
            )

    def finish(
        self, status: Optional[str] = None, exit_code: Optional[int] = None, error: Optional[str] = None
    ) -> None:
        """End the run: tell the services, close the logger, record status and end time (idempotent).

        A service failing at the end is reported (warn.txt and run.json's ``finish_warnings``);
        the run still ends.
        """
        run = self.run
        if run is None or not self.active:
            return
        self.active = False
        warnings = self.lifecycle.finish(run)
        if self._heartbeat is not None:
            self._heartbeat.close()
            self._heartbeat = None
        try:
            self._save_state(run)
        finally:
            for message in warnings:
                self.logger.warn(f"while finishing the run: {message}")
            self.logger.reset()
            final = status or ri.FINISHED
            code = exit_code if exit_code is not None else (0 if final == ri.FINISHED else 1)
            now = ri.now_iso()
            ended: dict[str, Any] = dict(
                status=final, exit_code=code, error=error, end_time=now, heartbeat=now
            )
            if warnings:
                ended["finish_warnings"] = warnings
            run.record.update(**ended)
        self.lifecycle.after_finish(run)


__all__ = ["Runner", "announce", "make_dirs"]
