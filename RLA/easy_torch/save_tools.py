"""The original's ``RLA.easy_torch.save_tools`` over the run's checkpoint saver.

``save_model_dict`` saves through ``exp_manager.save_checkpoint`` (a numbered, rotated,
atomically written ``checkpoint-<step>.pt``; the original overwrote one ``checkpoint.pt``).
``load_checkpoint(tester)`` returns the model dict of the run's newest checkpoint, and
still reads a ``checkpoint.pt`` the original wrote when the run has no numbered one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from RLA.errors import CheckpointError

#: The single file the original's ``save_model_dict`` wrote.
ORIGINAL_FILE = "checkpoint.pt"


def save_model_dict(model_dict: Mapping[str, Any]) -> Path:
    """Save ``model_dict`` in the current run at the current time-step; returns the file."""
    from RLA.easy_log.tester import exp_manager

    return exp_manager.save_checkpoint(model_dict=model_dict)


def _checkpoint_dir(tester: Any) -> Path:
    folder = getattr(tester, "checkpoint_dir", None)
    if folder is None and getattr(tester, "layout", None) is not None:
        folder = tester.layout.checkpoint_dir
    if folder is None:
        raise CheckpointError(
            "load_checkpoint(tester) got no run",
            expected="exp_manager after log_files_gen(), or a run from exp_manager.load_tester(...)",
            found=repr(tester),
            fix="pass the manager or a loaded run",
        )
    return Path(folder)


def load_checkpoint(tester: Any) -> dict[str, Any]:
    """The model dict of ``tester``'s newest checkpoint (the manager, or a run from ``load_tester``).

    Raises:
        CheckpointError: the run has no checkpoint, or a file is corrupt.
    """
    folder = _checkpoint_dir(tester)
    original = folder / ORIGINAL_FILE
    has_numbered = folder.is_dir() and any(p.name.startswith("checkpoint-") for p in folder.iterdir())
    if original.is_file() and not has_numbered:
        from RLA.checkpoint import CheckpointSaver

        _, state = CheckpointSaver(folder, backend="torch", max_to_keep=None).backend.load(
            original, map_location="cpu"
        )
        return state
    loaded = tester.load_checkpoint()
    if isinstance(loaded, tuple):  # the manager: (step, model_dict)
        return loaded[1]
    from RLA.manager.checkpointing import split_state

    return split_state(loaded)[0]  # a PastRun: LoadedCheckpoint


__all__ = ["ORIGINAL_FILE", "load_checkpoint", "save_model_dict"]
