"""Replay-buffer snapshots of the current run, stored under ``replay_dir`` by time-step."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from RLA.logger.time_step import TimeStepHolder, time_step_holder
from RLA.manager.run import Run


class ReplayService:
    """``exp_manager.save_replay_buffer(buffer)`` / ``load_replay_buffer(...)`` for a run.

    A snapshot is tied to the checkpoint step: it is saved as ``<replay_dir>/step-<step>``
    with the current time-step, the same step ``save_checkpoint()`` uses, so a resumed run
    restores the buffer that matches its model.

    Args:
        clock: the time-step source (default: the global ``time_step_holder``).
    """

    def __init__(self, clock: TimeStepHolder = time_step_holder) -> None:
        self.clock = clock

    def save(self, run: Run, buffer: Any, step: Optional[int] = None, **options: Any) -> Path:
        """Snapshot ``buffer`` for the current time-step (or ``step``); returns its folder.

        Options are passed to :func:`RLA.replay_buffer.run_snapshots.save_run_buffer`
        (e.g. ``incremental=True``, ``keep_last=3``).
        """
        from RLA.replay_buffer.run_snapshots import save_run_buffer

        step = self.clock.get_time() if step is None else int(step)
        return save_run_buffer(buffer, run.layout.replay_dir, step, **options)

    def save_triggers(self, run: Run, buffer: Any, every: Optional[int] = None, **options: Any) -> Any:
        """Save paths that save every rank into this run's ``replay_dir``: every ``every``
        steps, on request (``triggers.request()`` or a ``SAVE_NOW`` file in ``replay_dir``),
        on SIGTERM and on an exception; use it as a context manager and call
        ``triggers.step(step)`` once per training step.

        Options are those of :class:`RLA.replay_buffer.save_triggers.SaveTriggers`
        (``keep_last``, ``signals``, ``asynchronous``, ``check_every``...).
        """
        from RLA.replay_buffer.save_triggers import SaveTriggers

        return SaveTriggers(buffer, run.layout.replay_dir, every=every, **options)

    def load(
        self,
        replay_dir: Path,
        buffer: Any = None,
        step: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """Restore a snapshot of ``replay_dir`` (a run's, e.g. the current one or a resumed run's parent).

        Args:
            replay_dir: the run's replay folder.
            buffer: a buffer to load into (``None`` builds one from the snapshot).
            step: the time-step of the snapshot; the newest complete one when ``None``.
        """
        from RLA.replay_buffer.run_snapshots import load_run_buffer

        return load_run_buffer(buffer, Path(replay_dir), step=step, **options)
