"""Original import path of ``ExperimentLoader`` (``from RLA.easy_log.exp_loader import ExperimentLoader``)."""
from __future__ import annotations

from RLA.loader import ExperimentLoader, arg_parser_postprocess, boolean_flag

#: The original's module-level loader; it selects the run lazily (config() or --loaded_date).
exp_loader = experimental_loader = ExperimentLoader()

__all__ = ["ExperimentLoader", "exp_loader", "experimental_loader", "arg_parser_postprocess", "boolean_flag"]
