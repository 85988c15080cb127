"""Continuing a past run's files in the current run: logs, checkpoints, results, replay.

Everything after the resume step is left behind, so a resumed curve has no duplicate or
backward steps; files are linked where the file system allows, copied elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from RLA.errors import CheckpointError, RLAError
from RLA.loader import continuation
from RLA.loader.legacy_checkpoints import continue_legacy_checkpoints
from RLA.loader.past_run import PastRun


@dataclass(frozen=True)
class Fork:
    """One continuation: the past run, the current run's layout, the step to cut at (``None``:
    every row), the checkpoint being resumed (if read already), the checkpoint backend and
    where progress lines go."""

    past: PastRun
    layout: Any
    step: Optional[int]
    loaded: Any
    backend: Optional[str]
    log: Callable[[str], None]


def continue_files(manager: Any, fork: Fork) -> None:
    """Continue the past run's files up to the step in the current run; the logger's files
    are closed meanwhile and reopened by ``manager``."""
    from RLA.logger import api as logger
    from RLA.replay_buffer.run_snapshots import fork_run_snapshots

    past, layout, step = fork.past, fork.layout, fork.step
    marker = f"[RLA] ---- resumed from {past.index} at time-step {step} in {layout.index} ----"
    logger.reset()  # close the current run's files before they are replaced
    try:
        continuation.continue_log_dir(past.layout.log_dir, layout.log_dir, step, marker)
        continuation.continue_checkpoints(past.layout.checkpoint_dir, layout.checkpoint_dir, step)
        continue_legacy_checkpoints(
            past.layout.checkpoint_dir, layout.checkpoint_dir, step, continuation.link_or_copy
        )
        continue_named_checkpoints(fork)
        continuation.continue_results(past.layout.results_dir, layout.results_dir, step)
        fork_run_snapshots(past.layout.replay_dir, layout.replay_dir, step, continuation.link_or_copy)
    finally:
        manager.reopen_logger()
    if step is not None:
        purge_tensorboard_after(step)


def continue_named_checkpoints(fork: Fork) -> None:
    """Link the past run's named checkpoints (``best``...) saved at or before the step.

    A named checkpoint's step is in its header, which costs a load of the file (the one
    being resumed is read already); an unreadable one stays behind, with a line in the log.
    """
    layout, step, loaded = fork.layout, fork.step, fork.loaded
    saver = fork.past.saver(fork.backend)
    for name in saver.names():
        source = saver.path_for(name)
        target = layout.checkpoint_dir / source.name
        if target.exists():
            continue
        if step is not None:
            known = loaded if loaded is not None and loaded.name == name else None
            try:
                saved = (known or saver.load_checkpoint(name, map_location="cpu")).step
            except CheckpointError as exc:
                fork.log(f"ExperimentLoader: named checkpoint {source.name} not carried over ({exc.problem})")
                continue
            if saved > step:
                continue  # saved after the resume point: it belongs to the old run only
        continuation.link_or_copy(source, target)


def purge_tensorboard_after(step: int) -> None:
    """Tell TensorBoard to discard any event after ``step`` it read from earlier files."""
    from RLA.logger import api as logger

    try:
        writer = logger.get_tbx_writer()
    except RLAError:
        return  # TensorBoard output not in use
    from tensorboardX.proto.event_pb2 import Event, SessionLog

    file_writer = writer.file_writer  # public: set when the writer opens, None once closed
    if file_writer is None:
        return
    file_writer.add_event(Event(step=step + 1, session_log=SessionLog(status=SessionLog.START)))
    file_writer.flush()
