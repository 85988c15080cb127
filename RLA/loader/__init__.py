"""Loading past runs: ExperimentLoader (load / resume / fork) and its argparse helpers."""

from __future__ import annotations

from RLA.loader.argparse_helpers import arg_parser_postprocess, boolean_flag
from RLA.loader.loader import LOADED_DATE, LOADED_TASK_NAME, ExperimentLoader
from RLA.loader.past_run import PastRun

__all__ = [
    "ExperimentLoader",
    "PastRun",
    "arg_parser_postprocess",
    "boolean_flag",
    "LOADED_DATE",
    "LOADED_TASK_NAME",
]
