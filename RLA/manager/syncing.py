"""The push of the current run to the main node (``sync_log_file``), as a run service."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from RLA.errors import ConfigError, SyncError
from RLA.manager.plugins import SYNC_ENGINES, BackgroundPusher, Pusher
from RLA.manager.run import Run
from RLA.manager.services import RunService


class SyncService(RunService):
    """Pushes the run's ``REMOTE_SETTING.sync_types`` to the main node when asked.

    Hooked to the run's end: a background push is finished (and its failures raised) before
    the final status is written, and a run pushed while running is pushed once more after,
    so that the main node never lists a finished run as running.

    Args:
        remote: ``REMOTE_SETTING`` of the configuration.
        send_log_file: ``SEND_LOG_FILE`` of the configuration.
        project_root: the folder of the configuration.
        is_master_node: this process runs on the main node (it never pushes).
        info: where "skipped" is said (the logger's ``info``).
        warn: where failures skipped by ``skip_error`` are written (the run's warn.txt).
    """

    name = "sync"

    def __init__(
        self,
        remote: Any,
        send_log_file: bool,
        project_root: Path,
        is_master_node: bool,
        info: Callable[[str], None],
        warn: Callable[[str], None],
    ) -> None:
        self.remote = remote
        self.send_log_file = send_log_file
        self.project_root = project_root
        self.is_master_node = is_master_node
        self._info = info
        self._warn = warn
        self._background: Optional[BackgroundPusher] = None
        self._skip_error = False
        self._pending: Optional[Run] = None
        self._push_after_finish = False

    def enabled(self) -> bool:
        """Whether this process pushes (not the main node, and ``SEND_LOG_FILE`` is true)."""
        return not self.is_master_node and bool(self.send_log_file)

    def skip(self) -> Optional[Any]:
        """Say that this process does not push; pushes nothing (returns ``None``)."""
        self._info("skip the sync process (main node or SEND_LOG_FILE: false).")
        return None

    def _syncer(self, run: Run) -> Pusher:
        make = SYNC_ENGINES.get("push")
        return make(self.remote, run.layout.data_root, project_root=self.project_root, warn=self._warn)

    def push(self, run: Run, running: bool, skip_error: bool = False) -> Optional[Any]:
        """Push ``run``; see :meth:`RLA.manager.experiment.ExperimentManager.sync_log_file`.

        Args:
            run: the run to push.
            running: the run has not finished (a background push is allowed, and the run is
                pushed again after it finishes).
            skip_error: turn a failure into a warning instead of raising.
        """
        if not self.enabled():
            return self.skip()
        if running:
            self._push_after_finish = True
        try:
            if self.remote.background and running:
                self._push_in_background(run, skip_error)
                return None
            return self._syncer(run).push([run.layout])
        except (SyncError, ConfigError) as exc:
            if not skip_error:
                raise
            self._warn(f"sync_log_file failed and was skipped: {exc}")
            return None

    def _push_in_background(self, run: Run, skip_error: bool) -> None:
        self._skip_error = skip_error
        if self._background is None:
            self._background = SYNC_ENGINES.get("background")(self._syncer(run), warn=self._warn)
        self._pending = run
        self._background.submit([run.layout])

    def close(self) -> None:
        """Send what is left, stop the background thread and report its failures.

        Idempotent. A last push of the current run is queued first so that the main node gets
        the logs written since the last ``sync_log_file()``.

        Raises:
            SyncError: a background push failed and the last ``sync_log_file`` call did not
                pass ``skip_error=True`` (the failures are in warn.txt either way).
        """
        background, self._background = self._background, None
        if background is None:
            return
        try:
            if self._pending is not None:
                background.submit([self._pending.layout])
        finally:
            self._pending = None
            background.close(raise_errors=not self._skip_error)

    def on_finish(self, run: Run) -> None:
        self.close()

    def after_finish(self, run: Run) -> None:
        """Push the final run.json of a run pushed while it ran (failures go to warn.txt)."""
        if self._push_after_finish:
            self._push_after_finish = False
            self.push(run, running=False, skip_error=True)


__all__ = ["SyncService"]
