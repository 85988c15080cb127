"""CheckpointMixin: the manager's ``new_saver`` / ``save_checkpoint`` / ``load_checkpoint``.

A checkpoint file holds one dict::

    {"models": model_dict, "related_variable": {...}, "rng": {...} or None, "time_step": step}

``models`` are state dicts (or anything the codec stores); ``related_variable`` values come
back with their types; ``rng`` restores python/numpy/torch generators on request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from RLA.checkpoint import (
    CheckpointSaver,
    LoadedCheckpoint,
    backend_for_framework,
    capture_rng_state,
    restore_rng_state,
)
from RLA.errors import CheckpointError
from RLA.fs import json_default
from RLA.logger.time_step import time_step_holder

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


class CheckpointMixin:
    """Checkpoint methods of :class:`RLA.manager.experiment.ExperimentManager`.

    Needs from the host class: ``_require_run(what)`` (returns the run's ``RunLayout``),
    ``config.dl_framework``, ``custom_data``, ``save_state()`` and ``update_run_info(**kw)``.
    """

    _ckpt_saver: Optional[CheckpointSaver] = None
    _ckpt_options: Dict[str, Any] = {}

    def new_saver(
        self,
        max_to_keep: Optional[int] = 10,
        var_prefix: Optional[str] = None,
        backend: Optional[str] = None,
        save_rng: bool = True,
        durable: bool = True,
        verbose: bool = True,
    ) -> CheckpointSaver:
        """Create the run's checkpoint saver (called implicitly by the first save).

        Args:
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
        layout = self._require_run("new_saver()")  # type: ignore[attr-defined]
        config = getattr(self, "config", None)
        name = backend or backend_for_framework(getattr(config, "dl_framework", None))
        self._ckpt_options = {
            "max_to_keep": max_to_keep,
            "var_prefix": var_prefix,
            "backend": name,
            "save_rng": save_rng,
            "durable": durable,
        }
        self._ckpt_saver = CheckpointSaver(
            layout.checkpoint_dir, backend=name, max_to_keep=max_to_keep, durable=durable
        )
        return self._ckpt_saver

    @property
    def saver(self) -> Optional[CheckpointSaver]:
        """The current run's saver (``None`` before ``new_saver``/the first save)."""
        return self._ckpt_saver

    def _current_saver(self) -> CheckpointSaver:
        layout = self._require_run("save_checkpoint()")  # type: ignore[attr-defined]
        saver = self._ckpt_saver
        if saver is None or Path(saver.directory) != Path(layout.checkpoint_dir):
            # First save of this run: the options of new_saver under this configuration (kept
            # across log_files_gen(); configure() resets them), else the defaults.
            saver = self.new_saver(**self._ckpt_options)
        return saver

    def save_checkpoint(
        self,
        model_dict: Optional[Mapping[str, Any]] = None,
        related_variable: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
        checkpoint_name: str = "checkpoint",
    ) -> Path:
        """Save models and variables at the current time-step as ``checkpoint-<step>.<ext>``.

        Args:
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
        saver = self._current_saver()
        step = int(time_step_holder.get_time())
        prefix = self._ckpt_options.get("var_prefix")
        state = {
            "models": filter_prefix(model_dict or {}, prefix),
            "related_variable": dict(related_variable or {}),
            "rng": capture_rng_state() if self._ckpt_options.get("save_rng", True) else None,
            "time_step": step,
        }
        path = saver.save(step, state, name=name)
        custom = self.custom_data  # type: ignore[attr-defined]
        for key, value in (related_variable or {}).items():
            custom[key] = _jsonable(value)
        custom[TIME_STEP_KEY] = step
        # The logs up to this step reach the disk with the checkpoint, so a run killed later
        # resumes with complete scalars (TensorBoard's writer thread lags otherwise).
        from RLA.easy_log import logger

        logger.get_current().flush()
        self.save_state()  # type: ignore[attr-defined]
        self.update_run_info(last_checkpoint={"step": step, "file": path.name})  # type: ignore[attr-defined]
        return path

    def load_checkpoint(
        self,
        ckp_index: Union[None, int, str] = None,
        restore_rng: bool = False,
        map_location: Any = "cpu",
        checkpoint_name: str = "checkpoint",
    ) -> Tuple[int, Dict[str, Any]]:
        """Load this run's newest checkpoint (or step / name ``ckp_index``).

        Args:
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
        saver = self._current_saver()
        loaded = saver.load_checkpoint(ckp_index, map_location=map_location)
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
        return loaded.step, filter_prefix(models, self._ckpt_options.get("var_prefix"))

    #: Related variables of the last ``load_checkpoint`` (types intact).
    loaded_variables: Dict[str, Any] = {}


def _jsonable(value: Any) -> Any:
    """A JSON copy of ``value`` for the run's resume state (the checkpoint keeps the real type)."""
    return json.loads(json.dumps(value, default=json_default, allow_nan=True))


__all__ = ["CheckpointMixin", "split_state", "filter_prefix", "TIME_STEP_KEY"]
