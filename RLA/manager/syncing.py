"""``SyncMixin``: the manager's push of the current run to the main node (``sync_log_file``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from RLA.errors import ConfigError, SyncError

if TYPE_CHECKING:
    from RLA.sync.background import BackgroundSyncer
    from RLA.sync.syncer import RunSyncer, SyncReport


class SyncMixin:
    """Adds :meth:`sync_log_file` and :meth:`close_sync` to the experiment manager.

    Uses the manager's ``config``, ``data_root``, ``is_master_node``, ``layout``,
    ``warn()`` and ``add_finish_hook()``; owns nothing else of it.
    """

    _sync_background: Optional["BackgroundSyncer"] = None
    _sync_skip_error: bool = False
    _sync_layout: Any = None

    def _sync_settings_ready(self) -> bool:
        config = getattr(self, "config", None)
        if config is None:
            raise ConfigError(
                "sync_log_file() needs a configured manager",
                expected="exp_manager.configure(...) called first",
                found="no configuration",
                fix="call configure() and log_files_gen() before syncing",
            )
        return not self.is_master_node and config.send_log_file  # type: ignore[attr-defined]

    def _make_syncer(self) -> "RunSyncer":
        from RLA.sync.syncer import RunSyncer

        config = self.config  # type: ignore[attr-defined]
        return RunSyncer(
            config.remote,
            self.data_root,
            project_root=config.project_root,  # type: ignore[attr-defined]
            warn=self.warn,
        )  # type: ignore[attr-defined]

    def sync_log_file(self, skip_error: bool = False) -> Optional["SyncReport"]:
        """Push the current run (its ``REMOTE_SETTING.sync_types``) to the main node.

        Skipped on the main node (``is_master_node``) and when ``SEND_LOG_FILE`` is false,
        as the original did. Only new and changed files travel; append-only logs send their
        new bytes. With ``REMOTE_SETTING.background: true`` this returns at once and a thread
        pushes; its failures are written to warn.txt and raised by ``finish()``. Called after
        ``finish()``, it pushes synchronously (this sends the final status in run.json).

        Args:
            skip_error: turn a failure into a warning in warn.txt instead of raising.

        Returns:
            The push report (``None`` when skipped or in background mode).

        Raises:
            SyncError: the push failed (``AuthError`` / ``TransportError`` for the cause).
            ConfigError: ``REMOTE_SETTING`` lacks the server or ``remote_data_root``.
        """
        if not self._sync_settings_ready():
            from RLA.easy_log import logger

            logger.info("skip the sync process (main node or SEND_LOG_FILE: false).")
            return None
        layout = self._require_run("sync_log_file()")  # type: ignore[attr-defined]
        # After finish() no thread may be left behind: the last push is synchronous.
        running = getattr(self, "_active", lambda: True)()
        if running:
            # Once the run has been pushed, push it again after finish() wrote its final
            # status, so that the main node never lists a finished run as running.
            self.add_post_finish_hook(self._push_final_status)  # type: ignore[attr-defined]
        try:
            if self.config.remote.background and running:  # type: ignore[attr-defined]
                self._sync_skip_error = skip_error
                if self._sync_background is None:
                    from RLA.sync.background import BackgroundSyncer

                    self._sync_background = BackgroundSyncer(self._make_syncer(), warn=self.warn)  # type: ignore[attr-defined]
                    self.add_finish_hook(self.close_sync)  # type: ignore[attr-defined]
                self._sync_layout = layout
                self._sync_background.submit([layout])
                return None
            return self._make_syncer().push([layout])
        except (SyncError, ConfigError) as exc:
            if not skip_error:
                raise
            self.warn(f"sync_log_file failed and was skipped: {exc}")  # type: ignore[attr-defined]
            return None

    def _push_final_status(self) -> None:
        """Push the run once more after ``finish()`` (its final run.json); never raises."""
        self.sync_log_file(skip_error=True)

    def close_sync(self) -> None:
        """Send what is left, stop the background thread and report its failures.

        Called by ``finish()``; idempotent. A last push of the current run is queued first
        so that the main node gets the logs written since the last ``sync_log_file()``.

        Raises:
            SyncError: a background push failed and the last ``sync_log_file`` call did not
                pass ``skip_error=True`` (the failures are in warn.txt either way).
        """
        background, self._sync_background = self._sync_background, None
        if background is None:
            return
        try:
            if self._sync_layout is not None:
                background.submit([self._sync_layout])
        finally:
            self._sync_layout = None
            background.close(raise_errors=not self._sync_skip_error)
