"""Ray Tune: every trial is one RLA run (config, searched keys, status, metrics, checkpoints).

Usage::

    from ray import tune
    from RLA.integrations import ray_tune as rla_tune

    def train(config):
        step, models, variables = rla_tune.restore()          # (None, {}, {}) on a fresh trial
        start = 0 if step is None else step + 1
        for it in range(start, 100):
            ...
            rla_tune.report({"return": ret}, step=it, checkpoint={"policy": net.state_dict()})

    space = {"lr": tune.grid_search([1e-3, 5e-4]), "seed": tune.grid_search([0, 1, 2])}
    tuner = tune.Tuner(rla_tune.trainable(train, task="sweep", rla_config="rla_config.yaml",
                                          param_space=space), param_space=space)

Each trial's config is the run's hyper-parameters, the searched keys of ``param_space`` are
its tracked keys (its name), :func:`report` logs the metrics as one row and forwards them to
Tune, and a checkpoint given to :func:`report` is saved as the run's RLA checkpoint (with the
replay buffer, if given) and handed to Tune as the trial's checkpoint. The status follows the
trial: ``finished``, ``crashed`` with the error, ``killed`` when a scheduler or a stopper
ends it. A trial Tune restores (after a failure with ``max_failures``, or a pause) continues
the same run: the logs are cut to the restored step (:mod:`RLA.integrations.same_run`).
Ray is imported only when these functions run.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from RLA.errors import RunStateError
from RLA.fs import atomic_write_json, read_json
from RLA.integrations import same_run
from RLA.loader.continuation import link_or_copy
from RLA.logger.time_step import time_step_holder
from RLA.manager import run_info as ri

#: The file naming the RLA run in a Tune checkpoint and in a trial's folder.
REFERENCE = "rla_run.json"
#: Exit code recorded for a trial stopped by Tune (as for SIGTERM).
STOPPED_EXIT_CODE = 143
STOPPED_ERROR = "stopped by Ray Tune (a scheduler or a stopper ended the trial)"


def searched_keys(param_space: Mapping[str, Any], prefix: str = "") -> List[str]:
    """The dotted keys of ``param_space`` that Tune searches (``tune.grid_search``, ``tune.choice``...)."""
    from ray.tune.search.sample import Domain

    keys = []
    for key, value in param_space.items():
        name = f"{prefix}{key}"
        if isinstance(value, Domain) or (isinstance(value, dict) and set(value) == {"grid_search"}):
            keys.append(name)
        elif isinstance(value, Mapping):
            keys.extend(searched_keys(value, name + "."))
    return keys


def _manager() -> Any:
    from RLA.easy_log.tester import exp_manager

    return exp_manager


def _absolute(path: Union[str, Path, Dict[str, Any], None]) -> Any:
    """Paths resolved on the driver: Tune runs trials in their own working folders."""
    return str(Path(path).expanduser().resolve()) if isinstance(path, (str, Path)) else path


def _trial_facts() -> Dict[str, Any]:
    from ray import tune

    ctx = tune.get_context()
    return {
        "trial_id": ctx.get_trial_id(),
        "trial_name": ctx.get_trial_name(),
        "experiment": ctx.get_experiment_name(),
        "trial_dir": ctx.get_trial_dir(),
    }


def _checkpoint_reference() -> Optional[Dict[str, Any]]:
    """The run and step named by the trial's Tune checkpoint (``None`` without one)."""
    from ray import tune

    checkpoint = tune.get_checkpoint()
    if checkpoint is None:
        return None
    with checkpoint.as_directory() as folder:
        reference = read_json(Path(folder) / REFERENCE)
        reference["folder"] = checkpoint.path
    return reference


def _open_trial_run(config: Mapping[str, Any], settings: Dict[str, Any]) -> None:
    """Create the trial's run, or continue it when Tune restores the trial."""
    manager = _manager()
    manager.configure(
        settings["task"],
        rla_config=settings["rla_config"],
        data_root=settings["data_root"],
        run_file=settings["run_file"],
        code_root=settings["code_root"],
    )
    manager.set_hyper_param(**dict(config))
    manager.clear_record_param()
    manager.add_record_param(settings["tracked_keys"])
    facts = _trial_facts()
    trial_file = Path(facts["trial_dir"]) / REFERENCE
    reference = _checkpoint_reference()
    relative = (
        reference["run"] if reference else read_json(trial_file)["run"] if trial_file.is_file() else None
    )
    if relative is not None:
        layout = same_run.layout_of(manager.data_root, relative)
        step = int(reference["step"]) if reference else None
        same_run.continue_run(manager, layout, step, "restored by Ray Tune", tune=facts)
        return
    manager.log_files_gen()
    manager.print_args()
    manager.update_run_info(tune=facts)
    atomic_write_json(
        trial_file,
        {"run": manager.layout.relative, "index": manager.index, "data_root": str(manager.data_root)},
        durable=False,
    )


def _end_run(status: str, exit_code: Optional[int] = None, error: Optional[str] = None) -> None:
    manager = _manager()
    if manager.layout is not None and manager.run_info.get("status") == ri.RUNNING:
        manager.finish(status=status, exit_code=exit_code, error=error)


class _EndsStoppedRun:
    """Mixed into Tune's trainable class (Tune's ``__mixins__`` hook) to end a stopped trial's run.

    Tune stops a trial by calling ``cleanup()`` on its actor while the training thread waits
    in ``report()``; the run is ended as ``killed`` there, before the actor exits. A run the
    training function already ended (finished or crashed) is left as it is.
    """

    def cleanup(self) -> None:
        _end_run(ri.KILLED, STOPPED_EXIT_CODE, STOPPED_ERROR)
        super().cleanup()  # type: ignore[misc]


def trainable(
    train_fn: Callable[[Dict[str, Any]], Any],
    *,
    task: str,
    rla_config: Union[str, Path, Dict[str, Any]],
    data_root: Union[str, Path, None] = None,
    param_space: Optional[Mapping[str, Any]] = None,
    tracked_keys: Optional[Sequence[str]] = None,
    code_root: Union[str, Path, None] = None,
) -> Callable[[Dict[str, Any]], Any]:
    """Wrap a Tune function trainable so that each trial is one RLA run of ``task``.

    Args:
        train_fn: ``train_fn(config)``; it logs with :func:`report` (and RLA's ``logger``).
        task: the RLA task every trial's run belongs to.
        rla_config: ``rla_config.yaml`` (a path, resolved here) or a dict.
        data_root: the database (default: the config's ``DATA_ROOT``).
        param_space: Tune's ``param_space``: its searched keys become the tracked keys.
        tracked_keys: the tracked keys instead (dotted for nested config entries).
        code_root: folder relative config paths refer to.

    Returns:
        A function to pass to ``tune.Tuner``.
    """
    keys = list(tracked_keys) if tracked_keys is not None else searched_keys(param_space or {})
    source = inspect.getsourcefile(train_fn) if inspect.isfunction(train_fn) else None
    settings = {
        "task": task,
        "rla_config": _absolute(rla_config),
        "data_root": _absolute(data_root),
        "tracked_keys": keys,
        "code_root": _absolute(code_root),
        "run_file": [str(Path(source).resolve())] if source else [],
    }

    def rla_trial(config: Dict[str, Any]) -> Any:
        _open_trial_run(config, settings)
        try:
            result = train_fn(config)
        except SystemExit:  # Tune's report() exits the thread of a stopped trial
            _end_run(ri.KILLED, STOPPED_EXIT_CODE, STOPPED_ERROR)
            raise
        except KeyboardInterrupt:
            _end_run(ri.KILLED, 130, "KeyboardInterrupt")
            raise
        except BaseException as exc:
            _end_run(ri.CRASHED, 1, f"{type(exc).__name__}: {exc}")
            raise
        _end_run(ri.FINISHED)
        return result

    rla_trial.__name__ = getattr(train_fn, "__name__", "rla_trial")
    rla_trial.__mixins__ = (_EndsStoppedRun,)  # type: ignore[attr-defined]
    return rla_trial


def _require_trial_run() -> Any:
    manager = _manager()
    if manager.layout is None or manager.run_info.get("status") != ri.RUNNING:
        raise RunStateError(
            "No RLA run in this trial",
            expected="a trainable wrapped by RLA.integrations.ray_tune.trainable(...)",
            found="no running run",
            fix="pass rla_tune.trainable(train_fn, task=..., rla_config=...) to tune.Tuner",
        )
    return manager


def _log_row(metrics: Mapping[str, Any], prefix: str = "") -> None:
    from RLA.logger import api as logger

    for key, value in metrics.items():
        if isinstance(value, Mapping):
            _log_row(value, f"{prefix}{key}/")
        elif isinstance(value, (int, float, str, bool)) or hasattr(value, "item"):
            logger.record_tabular(f"{prefix}{key}", value)


def _tune_checkpoint(
    manager: Any,
    models: Mapping[str, Any],
    variables: Optional[Mapping[str, Any]],
    buffer: Any,
    keep_last: Optional[int],
) -> Tuple[Any, str]:
    """Save the RLA checkpoint (and replay snapshot); a Tune checkpoint folder naming it."""
    from ray import tune

    if buffer is not None:
        manager.save_replay_buffer(buffer, keep_last=keep_last)
    path = manager.save_checkpoint(dict(models), related_variable=variables)
    folder = tempfile.mkdtemp(prefix="rla-tune-")
    link_or_copy(path, Path(folder) / path.name)
    atomic_write_json(
        Path(folder) / REFERENCE,
        {
            "run": manager.layout.relative,
            "index": manager.index,
            "step": time_step_holder.get_time(),
            "file": path.name,
            "buffer": buffer is not None,
        },
        durable=False,
    )
    return tune.Checkpoint.from_directory(folder), folder


def report(
    metrics: Mapping[str, Any],
    *,
    step: Optional[int] = None,
    checkpoint: Optional[Mapping[str, Any]] = None,
    variables: Optional[Mapping[str, Any]] = None,
    buffer: Any = None,
    keep_last: Optional[int] = None,
) -> None:
    """Log ``metrics`` as one row of the trial's run and report them (and a checkpoint) to Tune.

    Args:
        metrics: scalars (nested dicts become ``a/b`` columns); Tune gets them unchanged plus
            ``rla_index``.
        step: the time-step of the row (default: the previous one + 1, i.e. Tune's
            ``training_iteration`` on a fresh trial).
        checkpoint: a model dict (state dicts, arrays...) saved as the run's checkpoint at
            this step and given to Tune as the trial's checkpoint.
        variables: related variables stored with the checkpoint (types kept).
        buffer: a replay buffer snapshotted at the same step (restored by :func:`restore`).
        keep_last: replay snapshots kept.
    """
    from ray import tune

    from RLA.logger import api as logger

    manager = _require_trial_run()
    time_step_holder.set_time(int(step) if step is not None else time_step_holder.get_time() + 1)
    _log_row(metrics)
    logger.dump_tabular()
    tune_checkpoint, folder = (
        (None, None)
        if checkpoint is None
        else _tune_checkpoint(manager, checkpoint, variables, buffer, keep_last)
    )
    try:
        tune.report(dict(metrics, rla_index=manager.index), checkpoint=tune_checkpoint)
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def restore(
    buffer: Any = None, restore_rng: bool = True, map_location: Any = "cpu"
) -> Tuple[Optional[int], Dict[str, Any], Dict[str, Any]]:
    """Load the trial's checkpoint when Tune restored it (after a failure or a pause).

    Args:
        buffer: a replay buffer to load the snapshot of the checkpoint's step into.
        restore_rng: put the RNG states saved with the checkpoint back.
        map_location: where tensors are loaded.

    Returns:
        ``(step, models, variables)``, or ``(None, {}, {})`` on a fresh trial.
    """
    manager = _require_trial_run()
    reference = _checkpoint_reference()
    if reference is None:
        return None, {}, {}
    step = int(reference["step"])
    own = manager.layout.checkpoint_dir / reference["file"]
    if not own.is_file():  # rotated out of the run (max_to_keep): Tune kept its copy
        from ray import tune

        with tune.get_checkpoint().as_directory() as folder:
            link_or_copy(Path(folder) / reference["file"], own)
    loaded_step, models = manager.load_checkpoint(step, restore_rng=restore_rng, map_location=map_location)
    if buffer is not None and reference.get("buffer"):
        manager.load_replay_buffer(buffer, step=loaded_step)
    return loaded_step, models, dict(manager.loaded_variables)


__all__ = ["trainable", "report", "restore", "searched_keys", "REFERENCE"]
