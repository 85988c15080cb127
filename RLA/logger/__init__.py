"""The logger subsystem: the ``Logger`` object, its output formats and the time-step.

Light to import: ``tensorboardX`` and ``pandas`` are imported only by the code that
uses them. The module-level (original, baselines-style) face is ``RLA.easy_log.logger``.

Because this package is also reachable as the attribute ``RLA.logger`` (Python binds a
sub-package to its parent's attribute when it is imported), ``from RLA import logger`` may
return this package instead of the face. Every name of the face is therefore forwarded
here: ``RLA.logger.record_tabular is RLA.easy_log.logger.record_tabular``.
"""

from __future__ import annotations

import importlib
from typing import Any, List

from RLA.logger.core import BACKUP, DEBUG, DISABLED, ERROR, INFO, WARN, Logger, normalize_value
from RLA.logger.formats import BUILTIN_FORMATS, make_output_format, output_formats, register_output_format
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.time_step import TimeStepHolder, time_step_holder

__all__ = [
    "Logger",
    "KVWriter",
    "SeqWriter",
    "output_formats",
    "register_output_format",
    "make_output_format",
    "BUILTIN_FORMATS",
    "normalize_value",
    "TimeStepHolder",
    "time_step_holder",
    "DEBUG",
    "INFO",
    "WARN",
    "ERROR",
    "DISABLED",
    "BACKUP",
]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    face = importlib.import_module("RLA.easy_log.logger")
    try:
        return getattr(face, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> List[str]:
    face = importlib.import_module("RLA.easy_log.logger")
    return sorted(set(globals()) | set(face.__all__))
