"""The logger: ``from RLA import logger`` — the module-level API over one ``Logger``, its formats.

This package is what ``from RLA import logger`` returns, in every import order. It owns the
one current :class:`Logger` (:mod:`RLA.logger.api`: ``configure``, ``record_tabular``,
``dump_tabular``, ``info``/``warn``..., ``get_dir``), the ``Logger`` object
(:mod:`RLA.logger.core`), the output formats (:mod:`RLA.logger.formats`) and the time-step.
``RLA.easy_log.logger`` (the original's import path) re-exports these same names.

Light to import: ``tensorboardX`` and ``pandas`` are imported only by the code that uses them.
"""

from __future__ import annotations

from typing import Any, List

from RLA.logger.api import (
    DEFAULT_FILE_FORMATS,
    backup,
    configure,
    debug,
    dump_tabular,
    dumpkvs,
    error,
    get_current,
    get_dir,
    get_tbx_writer,
    getkvs,
    info,
    log,
    log_key_value,
    logkv,
    logkv_mean,
    logkvs,
    ma_record_tabular,
    record_tabular,
    reset,
    scoped_configure,
    set_level,
    timestep,
    warn,
)
from RLA.logger.core import BACKUP, DEBUG, DISABLED, ERROR, INFO, WARN, Logger, normalize_value
from RLA.logger.extras import (
    ProfileKV,
    get_time,
    log_from_tf_summary,
    log_time_tracker,
    open_time_tracker,
    profile,
    set_comm,
    set_time,
    summary_val,
    valid_float_value,
)
from RLA.logger.formats import BUILTIN_FORMATS, make_output_format, output_formats, register_output_format
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.formats.csv import CSVOutputFormat
from RLA.logger.formats.json import JSONOutputFormat
from RLA.logger.formats.log import LogTxtOutputFormat
from RLA.logger.formats.stdout import StdoutOutputFormat
from RLA.logger.readers import read_csv, read_json, read_tb
from RLA.logger.time_step import TimeStepHolder, time_step_holder

#: The original's name of the ``log.txt`` format.
HumanOutputFormat = LogTxtOutputFormat

#: Names resolved when first used: the TensorBoard format (tensorboardX is heavy) and the
#: original's module globals, which live in the current logger.
_LAZY = ("TensorBoardOutputFormat", "ma_dict", "lst_print_dict")


def __getattr__(name: str) -> Any:
    if name == "TensorBoardOutputFormat":
        from RLA.logger.formats.tensorboard import TensorBoardOutputFormat

        return TensorBoardOutputFormat
    if name in ("ma_dict", "lst_print_dict"):
        # The current logger's moving-average windows and last-recorded steps of freq= keys
        # (read them, do not replace them).
        current = get_current()
        return current._ma if name == "ma_dict" else current._last_record
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEBUG",
    "INFO",
    "WARN",
    "ERROR",
    "DISABLED",
    "BACKUP",
    "DEFAULT_FILE_FORMATS",
    "Logger",
    "KVWriter",
    "SeqWriter",
    "HumanOutputFormat",
    "StdoutOutputFormat",
    "LogTxtOutputFormat",
    "CSVOutputFormat",
    "JSONOutputFormat",
    "TensorBoardOutputFormat",  # noqa: F822 - loaded lazily by __getattr__ (tensorboardX is heavy)
    "BUILTIN_FORMATS",
    "output_formats",
    "make_output_format",
    "register_output_format",
    "normalize_value",
    "TimeStepHolder",
    "time_step_holder",
    "configure",
    "reset",
    "get_current",
    "scoped_configure",
    "logkv",
    "record_tabular",
    "logkv_mean",
    "logkvs",
    "log_key_value",
    "ma_record_tabular",
    "dumpkvs",
    "dump_tabular",
    "getkvs",
    "log",
    "debug",
    "info",
    "warn",
    "error",
    "backup",
    "set_level",
    "get_dir",
    "get_tbx_writer",
    "timestep",
    "read_csv",
    "read_json",
    "read_tb",
    "ProfileKV",
    "profile",
    "get_time",
    "set_time",
    "open_time_tracker",
    "log_time_tracker",
    "set_comm",
    "valid_float_value",
    "summary_val",
    "log_from_tf_summary",
]
