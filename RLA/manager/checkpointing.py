"""The run's checkpoints as a service: ``new_saver`` / ``save_checkpoint`` / ``load_checkpoint``.

A checkpoint file holds one dict::

    {"models": model_dict, "related_variable": {...}, "rng": {...} or None, "time_step": step}

``models`` are state dicts (or anything the codec stores); ``related_variable`` values come
back with their types; ``rng`` restores python/numpy/torch generators on request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from RLA.checkpoint import (
    CheckpointSaver,
    LoadedCheckpoint,
    backend_for_framework,
    capture_rng_state,
    restore_rng_state,
)
from RLA.errors import CheckpointError
from RLA.logger.time_step import time_step_holder
from RLA.manager.run import Run

#: ``custom_data`` key holding the step of the newest checkpoint (the original's name).
TIME_STEP_KEY = "time-step"


def split_state(loaded: LoadedCheckpoint) -> Tuple[Dict[str, Any], Dict[str, Any], Optional[Dict[str, Any]]]:
    """``(models, related_variable, rng)`` of a loaded checkpoint (legacy files: models only)."""
    state = loaded.state
    if loaded.legacy or not (isinstance(state, dict) and "models" in state):
        return (state if isinstance(state, dict) else {"model": state}), {}, None
    return dict(state.get("models") or {}), dict(state.get("related_variable") or {}), state.get("rng")


def filter_prefix(models: Mapping[str, Any], var_prefix: Optional[str]) -> Dict[str, Any]:
    """The entries of ``models`` whose key starts with ``var_prefix`` (all when ``None``)."""
    if not var_prefix:
        return dict(models)
    return {k: v for k, v in models.items() if str(k).startswith(var_prefix)}


#: Told about each checkpoint saved: ``(run, step, file, related_variable)``.
OnSaved = Callable[[Run, int, Path, Mapping[str, Any]], None]


class CheckpointService:
    """Saves and loads the current run's checkpoints (one :class:`CheckpointSaver` per run).

    The options of :meth:`new_saver` hold for the later runs of the same configuration; a new
    configuration starts from the defaults again (:meth:`reset`).

    Args:
        flush_logs: called after a checkpoint is written, so that the logs up to its step
            reach the disk with it (a run killed later resumes with complete scalars).
        on_saved: told about each checkpoint (the manager records it in the run's state).
        framework: ``DL_FRAMEWORK`` of the configuration (picks the default backend).
    """

    def __init__(
        self, flush_logs: Callable[[], None], on_saved: OnSaved, framework: Optional[str] = None
    ) -> None:
        self._flush_logs = flush_logs
        self._on_saved = on_saved
        self.framework = framework
        self.saver: Optional[CheckpointSaver] = None
        self.options: Dict[str, Any] = {}
        #: Related variables of the last :meth:`load` (types intact).
        self.loaded_variables: Dict[str, Any] = {}

    def reset(self, framework: Optional[str]) -> None:
        """A new configuration: default saving with ``framework``'s backend, no saver yet."""
        self.framework, self.saver, self.options = framework, None, {}

    def new_saver(
        self,
        run: Run,
        max_to_keep: Optional[int] = 10,
        var_prefix: Optional[str] = None,
        backend: Optional[str] = None,
        save_rng: bool = True,
        durable: bool = True,
        verbose: bool = True,
    ) -> CheckpointSaver:
        """Create the run's checkpoint saver (called implicitly by the first save).

        Args:
            run: the current run.
            max_to_keep: numbered checkpoints kept (newest by step); ``None``/``0`` keeps all.
            var_prefix: only ``model_dict`` entries whose key starts with it are saved/loaded
                (the original's TF variable-scope filter).
            backend: ``'torch'``, ``'numpy'`` or ``'tensorflow'``; default from ``DL_FRAMEWORK``
                (``none`` -> numpy).
            save_rng: store python/numpy/torch RNG states in every checkpoint.
            durable: fsync each checkpoint (set False to trade power-loss safety for speed).
            verbose: accepted for the original (it listed TensorFlow variables); unused.
        """
        del verbose
        name = backend or backend_for_framework(self.framework)
        self.options = {
            "max_to_keep": max_to_keep,
            "var_prefix": var_prefix,
            "backend": name,
            "save_rng": save_rng,
            "durable": durable,
        }
        self.saver = CheckpointSaver(
            run.layout.checkpoint_dir, backend=name, max_to_keep=max_to_keep, durable=durable
        )
        return self.saver

    def _current_saver(self, run: Run) -> CheckpointSaver:
        saver = self.saver
        if saver is None or Path(saver.directory) != Path(run.layout.checkpoint_dir):
            # First save of this run: the options of new_saver under this configuration (kept
            # across log_files_gen(); reset() forgets them), else the defaults.
            saver = self.new_saver(run, **self.options)
        return saver

    def save(
        self,
        run: Run,
        model_dict: Optional[Mapping[str, Any]] = None,
        related_variable: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
        checkpoint_name: str = "checkpoint",
    ) -> Path:
        """Save models and variables at the current time-step as ``checkpoint-<step>.<ext>``.

        Args:
            run: the current run.
            model_dict: e.g. ``{"policy": policy.state_dict(), "optim": optim.state_dict()}``
                (modules and optimizers are accepted and stored as their state dicts).
            related_variable: values restored with their types by ``load_from_record_date``
                (also copied into ``custom_data`` and the run's resume state).
            name: save as the named checkpoint ``checkpoint-<name>.<ext>`` (e.g. ``'best'``),
                kept outside rotation.
            checkpoint_name: polixir's keyword: ``'checkpoint'`` (default) is the numbered
                series; another value saves the named checkpoint ``checkpoint-<value>``
                (newest kept, never rotated; polixir kept a rotated ``<value>_<step>.pt`` series).

        Returns:
            The checkpoint file.

        Raises:
            CheckpointError: a value cannot be stored (nothing is written then).
        """
        if name is None and checkpoint_name != "checkpoint":
            name = checkpoint_name
        saver = self._current_saver(run)
        step = int(time_step_holder.get_time())
        state = {
            "models": filter_prefix(model_dict or {}, self.options.get("var_prefix")),
            "related_variable": dict(related_variable or {}),
            "rng": capture_rng_state() if self.options.get("save_rng", True) else None,
            "time_step": step,
        }
        path = saver.save(step, state, name=name)
        self._flush_logs()
        self._on_saved(run, step, path, dict(related_variable or {}))
        return path

    def load(
        self,
        run: Run,
        ckp_index: Union[None, int, str] = None,
        restore_rng: bool = False,
        map_location: Any = "cpu",
        checkpoint_name: str = "checkpoint",
    ) -> Tuple[int, Dict[str, Any]]:
        """Load this run's newest checkpoint (or step / name ``ckp_index``).

        Args:
            run: the current run.
            ckp_index: a step, a name such as ``'best'``, or ``None`` for the newest
                complete checkpoint.
            restore_rng: put the saved RNG states back (to continue the same random stream).
            map_location: where tensors are loaded (``'cpu'`` by default).
            checkpoint_name: polixir's keyword: another value than ``'checkpoint'`` loads
                that named checkpoint (when ``ckp_index`` is None).

        Returns:
            ``(step, model_dict)``; the related variables are in :attr:`loaded_variables`.

        Raises:
            CheckpointError: no such checkpoint, a corrupt file or another backend's file.
        """
        if ckp_index is None and checkpoint_name != "checkpoint":
            ckp_index = checkpoint_name
        loaded = self._current_saver(run).load_checkpoint(ckp_index, map_location=map_location)
        models, variables, rng = split_state(loaded)
        if restore_rng:
            if rng is None:
                raise CheckpointError(
                    f"Checkpoint {loaded.path} has no RNG state",
                    expected="a checkpoint saved with new_saver(save_rng=True)",
                    found="rng: None",
                    fix="call load_checkpoint(restore_rng=False)",
                )
            restore_rng_state(rng)
        self.loaded_variables = variables
        return loaded.step, filter_prefix(models, self.options.get("var_prefix"))


__all__ = ["CheckpointService", "split_state", "filter_prefix", "TIME_STEP_KEY"]
