"""Replay-buffer snapshots of the current run, stored under ``replay_dir`` by time-step."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from RLA.logger.time_step import time_step_holder


class ReplayMixin:
    """``exp_manager.save_replay_buffer(buffer)`` / ``load_replay_buffer(...)``.

    A snapshot is tied to the checkpoint step: it is saved as ``<replay_dir>/step-<step>``
    with the current time-step, the same step ``save_checkpoint()`` uses, so a resumed run
    restores the buffer that matches its model.
    """

    def save_replay_buffer(self, buffer: Any, step: Optional[int] = None, **options: Any) -> Path:
        """Snapshot ``buffer`` for the current time-step (or ``step``); returns its folder.

        Options are passed to :func:`RLA.replay_buffer.run_snapshots.save_run_buffer`
        (e.g. ``incremental=True``, ``keep_last=3``).
        """
        from RLA.replay_buffer.run_snapshots import save_run_buffer

        layout = self._require_run("save_replay_buffer()")  # type: ignore[attr-defined]
        step = time_step_holder.get_time() if step is None else int(step)
        return save_run_buffer(buffer, layout.replay_dir, step, **options)

    def replay_save_triggers(self, buffer: Any, every: Optional[int] = None, **options: Any) -> Any:
        """Save paths that save every rank into this run's ``replay_dir``: every ``every``
        steps, on request (``triggers.request()`` or a ``SAVE_NOW`` file in ``replay_dir``),
        on SIGTERM and on an exception; use it as a context manager and call
        ``triggers.step(step)`` once per training step.

        Options are those of :class:`RLA.replay_buffer.save_triggers.SaveTriggers`
        (``keep_last``, ``signals``, ``asynchronous``, ``check_every``...).
        """
        from RLA.replay_buffer.save_triggers import SaveTriggers

        layout = self._require_run("replay_save_triggers()")  # type: ignore[attr-defined]
        return SaveTriggers(buffer, layout.replay_dir, every=every, **options)

    def load_replay_buffer(
        self,
        buffer: Any = None,
        step: Optional[int] = None,
        replay_dir: Optional[Path] = None,
        **options: Any,
    ) -> Any:
        """Restore a snapshot of this run (or of ``replay_dir``, e.g. a resumed run's parent).

        Args:
            buffer: a buffer to load into (``None`` builds one from the snapshot).
            step: the time-step of the snapshot; the newest complete one when ``None``.
            replay_dir: another run's replay folder (default: this run's).
        """
        from RLA.replay_buffer.run_snapshots import load_run_buffer

        if replay_dir is None:
            replay_dir = self._require_run("load_replay_buffer()").replay_dir  # type: ignore[attr-defined]
        return load_run_buffer(buffer, Path(replay_dir), step=step, **options)
