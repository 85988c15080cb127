"""polixir's ``RLA.exp_loader`` package: the loader names, re-exported."""

from __future__ import annotations

from RLA.easy_log.exp_loader import ExperimentLoader, fork_log_file_fn, update_hyper_parameters_fn

__all__ = ["ExperimentLoader", "fork_log_file_fn", "update_hyper_parameters_fn"]
