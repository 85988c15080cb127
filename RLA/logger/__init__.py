"""The logger subsystem: the ``Logger`` object, its output formats and the time-step.

Light to import: ``tensorboardX`` and ``pandas`` are imported only by the code that
uses them. The module-level (original, baselines-style) face is ``RLA.easy_log.logger``.
"""
from __future__ import annotations

from RLA.logger.core import (BACKUP, DEBUG, DISABLED, ERROR, INFO, WARN, Logger,
                             normalize_value)
from RLA.logger.formats import (BUILTIN_FORMATS, make_output_format, output_formats,
                                register_output_format)
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.time_step import TimeStepHolder, time_step_holder

__all__ = ["Logger", "KVWriter", "SeqWriter", "output_formats", "register_output_format",
           "make_output_format", "BUILTIN_FORMATS", "normalize_value", "TimeStepHolder",
           "time_step_holder", "DEBUG", "INFO", "WARN", "ERROR", "DISABLED", "BACKUP"]
