"""Hydra: each Hydra job is one RLA run (composed config, command-line overrides, output folder).

Usage::

    import hydra
    from RLA.integrations.hydra_run import rla_hydra

    @hydra.main(config_path="conf", config_name="config", version_base=None)
    @rla_hydra(task="dqn_hydra", rla_config="rla_config.yaml")
    def main(cfg):
        ...                       # exp_manager, logger, time_step_holder as usual

    # python train.py -m optim.lr=1e-3,5e-4 seed=0,1,2   -> 6 runs of task dqn_hydra

The composed config (interpolations resolved) becomes the run's hyper-parameters (nested
dicts: the query and the plots see them as dotted keys such as ``optim.lr``), the keys
overridden on the command line become the tracked keys (a config-group override such as
``optim=adam`` is tracked as ``hydra_choices.optim``), every job of a multirun sweep is one
run of the same task, and Hydra's output folder is linked both ways: ``run.json`` records it
(``hydra.output_dir``, with the sweep folder, job number and overrides), and the output
folder gets ``rla_run.json`` naming the run (plain files: RLA never follows symlinks). The
run ends with the job: ``finished``, ``crashed`` with the error, ``killed`` on Ctrl-C.
Hydra is imported only when a job starts.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from RLA.fs import atomic_write_json

#: The file naming the RLA run in Hydra's output folder.
REFERENCE = "rla_run.json"
#: The hyper-parameter holding the chosen config-group options (``{"optim": "adam"}``).
CHOICES = "hydra_choices"


def _has_path(params: Mapping[str, Any], dotted: str) -> bool:
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return not isinstance(node, Mapping)


def override_keys(overrides: Sequence[str], params: Mapping[str, Any]) -> List[str]:
    """The dotted keys set by Hydra command-line ``overrides`` (deletions ``~key`` skipped).

    A config-group override (``optim=adam``) is ``hydra_choices.<group>``; a key that is
    not a leaf of ``params`` (nor a group choice) is skipped.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    keys: List[str] = []
    choices = params.get(CHOICES) or {}
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        if override.is_delete():
            continue
        key = override.key_or_group
        if key in choices:
            key = f"{CHOICES}.{key}"
        elif not _has_path(params, key):
            continue
        if key not in keys:
            keys.append(key)
    return keys


def _hydra_facts(hydra_cfg: Any) -> Dict[str, Any]:
    mode = str(hydra_cfg.mode).rsplit(".", 1)[-1] if hydra_cfg.mode is not None else None
    return {
        "output_dir": str(Path(hydra_cfg.runtime.output_dir).resolve()),
        "mode": mode,
        "job_name": hydra_cfg.job.name,
        "job_num": hydra_cfg.job.get("num"),
        "job_id": hydra_cfg.job.get("id"),
        "sweep_dir": str(Path(hydra_cfg.sweep.dir).resolve()) if mode == "MULTIRUN" else None,
        "overrides": list(hydra_cfg.overrides.task),
        "config_name": hydra_cfg.job.config_name,
    }


def _hyper_params(cfg: Any, hydra_cfg: Any) -> Dict[str, Any]:
    from omegaconf import OmegaConf

    params: Dict[str, Any] = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
    choices = {
        group: choice
        for group, choice in (hydra_cfg.runtime.choices or {}).items()
        if not str(group).startswith("hydra/") and choice is not None
    }
    if choices:
        params[CHOICES] = dict(choices)
    return params


def start_run(
    cfg: Any,
    *,
    rla_config: Union[str, Path, Dict[str, Any]],
    task: Optional[str] = None,
    data_root: Union[str, Path, None] = None,
    tracked_keys: Optional[Sequence[str]] = None,
    manager: Any = None,
) -> Any:
    """Create the RLA run of the current Hydra job (call it inside the ``@hydra.main`` function).

    Args:
        cfg: the job's composed config.
        rla_config: ``rla_config.yaml`` (relative to the folder Hydra was started in) or a dict.
        task: the RLA task (default: Hydra's job name, the script's name).
        data_root: the database (default: the config's ``DATA_ROOT``).
        tracked_keys: the tracked keys instead of the overridden ones.
        manager: the experiment manager (default: the global ``exp_manager``).

    Returns:
        The manager, with the job's run active.
    """
    from hydra.core.hydra_config import HydraConfig
    from hydra.utils import to_absolute_path

    if manager is None:
        from RLA.easy_log.tester import exp_manager as manager
    hydra_cfg = HydraConfig.get()
    params = _hyper_params(cfg, hydra_cfg)
    keys = list(tracked_keys) if tracked_keys is not None else override_keys(hydra_cfg.overrides.task, params)

    def absolute(p: Any) -> Any:
        return to_absolute_path(str(p)) if isinstance(p, (str, Path)) else p

    manager.configure(
        task or hydra_cfg.job.name, rla_config=absolute(rla_config), data_root=absolute(data_root)
    )
    manager.set_hyper_param(**params)
    manager.clear_record_param()
    manager.add_record_param(keys)
    manager.log_files_gen()
    manager.print_args()
    facts = _hydra_facts(hydra_cfg)
    manager.update_run_info(hydra=facts)
    atomic_write_json(
        Path(facts["output_dir"]) / REFERENCE,
        {
            "index": manager.index,
            "run": manager.layout.relative,
            "data_root": str(manager.data_root),
            "log_dir": str(manager.layout.log_dir),
        },
        durable=False,
    )
    return manager


def rla_hydra(
    *,
    rla_config: Union[str, Path, Dict[str, Any]],
    task: Optional[str] = None,
    data_root: Union[str, Path, None] = None,
    tracked_keys: Optional[Sequence[str]] = None,
) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorate a Hydra task function (below ``@hydra.main``) so that each job is one RLA run.

    The run ends when the function returns (``finished``) or raises (``crashed`` with the
    error; ``killed`` for Ctrl-C); the arguments are those of :func:`start_run`.
    """

    def decorate(task_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(task_fn)
        def job(cfg: Any) -> Any:
            manager = start_run(
                cfg, rla_config=rla_config, task=task, data_root=data_root, tracked_keys=tracked_keys
            )
            with manager:  # ExperimentManager.__exit__ records the status of the job
                return task_fn(cfg)

        return job

    return decorate


__all__ = ["rla_hydra", "start_run", "override_keys", "REFERENCE", "CHOICES"]
