"""Original import path of ``ExperimentLoader`` (``from RLA.easy_log.exp_loader import ExperimentLoader``)
and polixir's helpers ``fork_log_file_fn`` / ``update_hyper_parameters_fn``."""

from __future__ import annotations

import argparse
from typing import Optional, Sequence

from RLA.loader import ExperimentLoader, arg_parser_postprocess, boolean_flag

#: The original's module-level loader; it selects the run lazily (config() or --loaded_date).
exp_loader = experimental_loader = ExperimentLoader()


def update_hyper_parameters_fn(
    task_name: str,
    record_date: str,
    root: str,
    hp_to_overwrite: Optional[Sequence[str]] = None,
    sync_timestep: bool = False,
) -> argparse.Namespace:
    """The past run's hyper-parameters merged with the current ones (returned: polixir dropped them)."""
    loader = ExperimentLoader().config(task_name, record_date, root)
    return loader.import_hyper_parameters(hp_to_overwrite=hp_to_overwrite, sync_timestep=sync_timestep)


def fork_log_file_fn(
    root: str,
    task_name: str,
    record_date: str,
    hp_to_overwrite: Optional[Sequence[str]] = None,
    sync_timestep: bool = False,
) -> argparse.Namespace:
    """Continue the past run's logs in the current run; returns the merged hyper-parameters.

    With ``sync_timestep`` the time-step is set to the step the fork restored.
    """
    loader = ExperimentLoader().config(task_name, record_date, root)
    merged = loader.import_hyper_parameters(hp_to_overwrite=hp_to_overwrite, sync_timestep=sync_timestep)
    loader.fork_log_files(hp_to_overwrite=hp_to_overwrite)
    return merged


__all__ = [
    "ExperimentLoader",
    "exp_loader",
    "experimental_loader",
    "arg_parser_postprocess",
    "boolean_flag",
    "fork_log_file_fn",
    "update_hyper_parameters_fn",
]
