"""ExperimentLoader: select a past run and load, resume or fork it into the current run.

The three modes (SPEC §4.4)::

    # 1. a pretrained model for another task: load only
    load_iter, load_res, hist = loader.load_from_record_date()
    # 2. resume the same experiment: continue its logs, then load (time-step and RNG restored)
    loader.fork_log_files(); load_iter, load_res, hist = loader.load_from_record_date()
    # 3. resume with other settings: merge hyper-parameters first
    args = loader.import_hyper_parameters(hp_to_overwrite=["lr"])
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from RLA.checkpoint import LoadedCheckpoint, restore_rng_state
from RLA.errors import CheckpointError, RLAError, RunStateError
from RLA.fs import json_default
from RLA.loader import fork, hyper_merge
from RLA.loader.past_run import PastRun
from RLA.logger.time_step import time_step_holder
from RLA.manager.bookkeeping import bookkeeping_of, split_bookkeeping
from RLA.manager.checkpointing import filter_prefix, split_state
from RLA.naming import DATE_RE

#: Hyper-parameters naming the run to load (set by ``arg_parser_postprocess``).
LOADED_DATE, LOADED_TASK_NAME = "loaded_date", "loaded_task_name"


def _selected(value: Any) -> bool:
    """A usable ``loaded_date``/task value (the original defaulted it to ``True``)."""
    return isinstance(value, str) and value.strip() not in ("", "None", "none", "True", "False")


class ExperimentLoader:
    """Load, resume or fork a past run into the current one.

    Args:
        manager: the experiment manager of the current run (default: the global
            ``exp_manager``, looked up when used).
        trust_pickles: convert a past run's original ``<name>.pkl`` state (your own
            runs only; a restricted unpickler refuses anything but plain state).

    The past run is chosen by :meth:`config`, or else by the current hyper-parameters
    ``loaded_date`` / ``loaded_task_name`` (see :func:`arg_parser_postprocess`). Without
    either, nothing is loaded: ``load_from_record_date()`` returns ``(0, {}, {})`` and
    ``fork_log_files()`` does nothing, so a script runs fresh by default.
    """

    def __init__(self, manager: Any = None, trust_pickles: bool = False) -> None:
        self._manager = manager
        #: Read the original's pickled state of a past run once (restricted unpickler) and
        #: convert it to RLA's JSON state; off by default (see RLA.loader.legacy_pickle).
        self.trust_pickles = trust_pickles
        self.task_name: Optional[str] = None
        self.record_date: Optional[str] = None
        self.data_root: Optional[str] = None
        self._explicit = False
        self._past: Optional[PastRun] = None
        self._loaded: Optional[LoadedCheckpoint] = None
        self._forked = False

    # ----------------------------------------------------------------- selection
    @property
    def manager(self) -> Any:
        if self._manager is not None:
            return self._manager
        from RLA.manager.default import default_manager

        return default_manager()

    def config(
        self,
        task_name: Optional[str] = None,
        record_date: Optional[str] = None,
        root: Union[str, Path, None] = None,
    ) -> "ExperimentLoader":
        """Select the past run: its task, record date (index or ``YYYY/MM/DD/HH-MM-SS-ffffff``) and data root.

        ``task_name`` defaults to the current run's task and ``root`` to its data root; an
        index that starts with a task (``task/YYYY/...``) needs no ``task_name``.
        """
        self.task_name = task_name or None
        self.record_date = str(record_date) if record_date is not None else None
        self.data_root = str(root) if root is not None else None
        self._explicit = True
        self._past = None
        self._loaded = None
        return self

    def _selection(self) -> Tuple[Optional[str], Optional[str], Optional[str]]:
        hp = getattr(self.manager, "hyper_param", {}) or {}
        record = self.record_date if self._explicit else hp.get(LOADED_DATE)
        task = self.task_name if self._explicit else hp.get(LOADED_TASK_NAME)
        task = task if _selected(task) else None
        record = record if _selected(record) else None
        if task is None and record is not None and re.match(DATE_RE, record.strip()):
            task = getattr(self.manager, "task_table_name", None)  # a full index carries its own task
        root = self.data_root or getattr(self.manager, "data_root", None)
        return task, record, (str(root) if root is not None else None)

    @property
    def is_valid_config(self) -> bool:
        """True when a past run is selected (record date and data root known)."""
        _, record, root = self._selection()
        return record is not None and root is not None

    def _selected(self) -> bool:
        """Like :attr:`is_valid_config`, but a run selected without a data root (the manager
        not configured yet) is an error, not a silent "nothing to resume"."""
        _, record, root = self._selection()
        if record is not None and root is None:
            raise RLAError(
                f"A past run is selected ({record}) but no data root is known",
                expected="exp_manager.configure(...) before the loader is used, or "
                "loader.config(task, record_date, root)",
                found="a manager that is not configured yet",
                fix="call exp_manager.configure(...) first (it sets the data root)",
            )
        return record is not None

    def _require_past(self) -> PastRun:
        if self._past is None:
            task, record, root = self._selection()
            if record is None or root is None:
                raise RLAError(
                    "No past run is selected",
                    expected="loader.config(task_name, record_date, root) or the hyper-parameter loaded_date",
                    found=f"record_date={record!r}, root={root!r}",
                    fix="call config(...) or pass --loaded_date YYYY/MM/DD/HH-MM-SS-ffffff",
                )
            self._past = PastRun.find(root, task, record, trust_pickles=self.trust_pickles)
        return self._past

    @property
    def past_run(self) -> Optional[PastRun]:
        """The selected past run (``None`` when nothing is selected)."""
        return self._require_past() if self.is_valid_config else None

    def _log(self, message: str) -> None:
        from RLA.logger import api as logger

        logger.info(message)

    # ---------------------------------------------------------- hyper-parameters
    def import_hyper_parameters(
        self, hp_to_overwrite: Optional[Sequence[str]] = None, sync_timestep: bool = False
    ) -> argparse.Namespace:
        """The past run's hyper-parameters merged with the current ones, as a Namespace.

        The past values win, except the keys in ``hp_to_overwrite`` and the bookkeeping keys
        (``loaded_date``, ``loaded_task_name``, ``info``, ``data_root``: see
        :mod:`RLA.manager.bookkeeping`), which keep the current values. The manager is not changed:
        pass the result to ``exp_manager.set_hyper_param(**vars(args))``.

        Args:
            hp_to_overwrite: keys whose current value is kept.
            sync_timestep: also set the time-step to the step a resume restores (the newest
                complete numbered checkpoint, as ``fork_log_files()`` uses; the run's last
                time-step when it has none).

        Raises:
            HyperParameterError: a stored value was redacted (a secret, see
                :mod:`RLA.redaction`) and the current hyper-parameters have no value for it;
                with one, the current value is used.
        """
        current = copy.deepcopy(dict(getattr(self.manager, "hyper_param", {}) or {}))
        if not self._selected():
            return argparse.Namespace(**current)
        past = self._require_past()
        keep = list(hp_to_overwrite or [])
        bookkeeping = [LOADED_DATE, LOADED_TASK_NAME] + list(bookkeeping_of(self.manager))
        merged = hyper_merge.merge(current, past.hyper_param, keep, bookkeeping)
        redacted = hyper_merge.restore_redacted(merged, current)
        if redacted:
            self._log(
                f"ExperimentLoader: {', '.join(redacted)} taken from the current hyper-parameters "
                f"(stored redacted)"
            )
        if sync_timestep:  # the step a resume restores: the newest complete numbered checkpoint
            step = self._checkpoint(None, "cpu").step if past.saver().steps() else past.time_step
            time_step_holder.set_time(step)
        return argparse.Namespace(**merged)

    # -------------------------------------------------------------------- load
    def _checkpoint(
        self, ckp_index: Union[None, int, str], map_location: Any, backend: Optional[str] = None
    ) -> LoadedCheckpoint:
        past = self._require_past()
        if self._loaded is not None and (
            ckp_index is None or str(ckp_index) in (str(self._loaded.step), str(self._loaded.name))
        ):
            return self._loaded
        if self._forked and self._loaded is not None:
            raise RLAError(
                "The logs were already continued from another checkpoint",
                expected=f"ckp_index={self._loaded.step} (the step fork_log_files() used)",
                found=f"ckp_index={ckp_index!r}",
                fix="pass the same ckp_index to fork_log_files() and load_from_record_date()",
            )
        self._loaded = past.load_checkpoint(ckp_index, backend=backend, map_location=map_location)
        return self._loaded

    def load_from_record_date(
        self,
        var_prefix: Optional[str] = None,
        variable_list: Optional[Sequence[str]] = None,
        verbose: bool = True,
        ckp_index: Union[None, int, str] = None,
        restore_rng: Optional[bool] = None,
        map_location: Any = "cpu",
        backend: Optional[str] = None,
    ) -> Tuple[int, Dict[str, Any], Dict[str, Any]]:
        """Load the past run's checkpoint.

        Args:
            var_prefix: keep only models whose key starts with it.
            variable_list: related variables to return (default: all saved ones).
            verbose: log what was loaded.
            ckp_index: a step or name (``'best'``); default the newest complete checkpoint.
            restore_rng: restore the saved RNG states; default True after ``fork_log_files()``
                (resuming), False otherwise (loading for another task).
            map_location: where tensors go (``'cpu'``).
            backend: the checkpoint backend (default: the past run's ``DL_FRAMEWORK``).

        Returns:
            ``(load_iter, load_res, hist_variables)``: the checkpoint's step, its model dict
            and the related variables (types intact). ``(0, {}, {})`` when no run is selected.
            After ``fork_log_files()`` the time-step is set to ``load_iter``.

        Raises:
            RunNotFoundError: the selected run does not exist.
            CheckpointError: no such checkpoint, corrupt or foreign file, unknown variable.
        """
        if not self._selected():
            if verbose:
                self._log("ExperimentLoader: no past run selected (loaded_date unset); starting fresh")
            return 0, {}, {}
        loaded = self._checkpoint(ckp_index, map_location, backend)
        models, variables, rng = split_state(loaded)
        if loaded.legacy:
            variables = {k: v for k, v in self._require_past().custom_data.items()}
        if variable_list is not None:
            variables = _chosen_variables(loaded, variables, variable_list)
        if restore_rng is None:
            restore_rng = self._forked and rng is not None
        if restore_rng:
            _restore_rng(loaded, rng)
        if self._forked:
            time_step_holder.set_time(loaded.step)
        self._record_origin("fork" if self._forked else "load", loaded.step)
        if verbose:
            self._log(
                f"ExperimentLoader: loaded {loaded.path} (time-step {loaded.step}) from run "
                f"{self._require_past().index}"
            )
        return loaded.step, filter_prefix(models, var_prefix), variables

    def _record_origin(self, mode: str, step: Optional[int]) -> None:
        manager = self.manager
        if getattr(manager, "layout", None) is None:
            return  # no current run (e.g. evaluation only): nothing to record
        past = self._require_past()
        if getattr(manager, "parent", None) != past.index:
            manager.set_parent(past.index)
        manager.update_run_info(resumed_from={"index": past.index, "step": step, "mode": mode})

    # -------------------------------------------------------------------- fork
    def fork_log_files(
        self,
        ckp_index: Union[None, int, str] = None,
        hp_to_overwrite: Optional[Sequence[str]] = None,
        backend: Optional[str] = None,
    ) -> Optional[int]:
        """Continue the past run's logs, checkpoints and results in the current run.

        Rows after the restored step are dropped from the continued ``progress.csv`` and
        TensorBoard events, so a resumed curve has no duplicate or backward steps. The
        current run's hyper-parameters become the past run's (except ``hp_to_overwrite``),
        its ``parent`` is recorded, and the time-step is set to the restored step. Call it
        right after ``exp_manager.log_files_gen()``.

        Args:
            ckp_index: the checkpoint the resume will load (default: the newest complete one).
            hp_to_overwrite: current hyper-parameters kept instead of the past values.
            backend: the checkpoint backend (default: the past run's ``DL_FRAMEWORK``).

        Returns:
            The step the logs were cut at (``None`` if nothing is selected).

        Raises:
            RunStateError: no current run (call ``log_files_gen()`` first).
            RunNotFoundError / CheckpointError: bad selection; nothing is changed then.
        """
        if not self._selected():
            self._log("ExperimentLoader: no past run selected (loaded_date unset); nothing to fork")
            return None
        manager = self.manager
        layout = manager._require_run("fork_log_files()")
        _check_running(manager, layout)
        past = self._require_past()
        if past.layout.relative == layout.relative:
            raise RLAError(
                "A run cannot be forked into itself",
                expected="a past run's record date",
                found=past.index,
                fix="select the run to resume, then call log_files_gen() first",
            )
        step: Optional[int]
        if past.has_checkpoints() or ckp_index is not None:
            step = self._checkpoint(ckp_index, "cpu", backend).step
        else:
            step = None  # a run without checkpoints: continue every row
        merged = vars(self.import_hyper_parameters(hp_to_overwrite))
        fork.continue_files(manager, fork.Fork(past, layout, step, self._loaded, backend, self._log))
        self._forked = True
        manager.hyper_param = merged
        params, bookkeeping = split_bookkeeping(
            merged, getattr(manager, "hyper_param_record", []), bookkeeping_of(manager)
        )
        manager.update_run_info(hyper_params=_jsonable(params), bookkeeping=_jsonable(bookkeeping))
        time_step_holder.set_time(step if step is not None else past.time_step)
        self._record_origin("fork", step)
        self._log(
            f"ExperimentLoader: continued run {past.index} "
            f"({'up to time-step ' + str(step) if step is not None else 'all rows, no checkpoint'})"
        )
        return step

    # ------------------------------------------------------------------ replay
    def load_replay_buffer(self, buffer: Any = None, step: Optional[int] = None, **options: Any) -> Any:
        """Restore the past run's replay-buffer snapshot (default: the loaded checkpoint's step)."""
        past = self._require_past()
        if step is None and self._loaded is not None:
            step = self._loaded.step
        return self.manager.load_replay_buffer(
            buffer, step=step, replay_dir=past.layout.replay_dir, **options
        )


def _check_running(manager: Any, layout: Any) -> None:
    """Raise :class:`RunStateError` unless the current run ``layout`` is still running."""
    if (getattr(manager, "run_info", None) or {}).get("status", "running") != "running":
        raise RunStateError(
            "fork_log_files() needs a running run",
            expected="exp_manager.log_files_gen() called for the new run",
            found=f"run {layout.index} is finished",
            fix="call log_files_gen() first, then fork_log_files()",
        )


def _chosen_variables(
    loaded: LoadedCheckpoint, variables: Dict[str, Any], chosen: Sequence[str]
) -> Dict[str, Any]:
    """The related variables named in ``chosen``.

    Raises:
        CheckpointError: one of them was not saved with the checkpoint.
    """
    missing = [v for v in chosen if v not in variables]
    if missing:
        raise CheckpointError(
            f"Variables {missing} were not saved with checkpoint {loaded.path}",
            expected=f"some of {sorted(variables)}",
            found=repr(list(chosen)),
            fix="save them with save_checkpoint(related_variable={...}) or drop them",
        )
    return {v: variables[v] for v in chosen}


def _restore_rng(loaded: LoadedCheckpoint, rng: Any) -> None:
    """Restore the RNG states saved with the checkpoint.

    Raises:
        CheckpointError: the checkpoint was saved without them.
    """
    if rng is None:
        raise CheckpointError(
            f"Checkpoint {loaded.path} has no RNG state",
            expected="save_rng=True at save",
            found="rng: None",
            fix="call load_from_record_date(restore_rng=False)",
        )
    restore_rng_state(rng)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=json_default, allow_nan=True))


__all__ = ["ExperimentLoader", "LOADED_DATE", "LOADED_TASK_NAME"]
