"""The original module-level logger API (``from RLA import logger``), over one default ``Logger``.

Every function acts on the current logger (``get_current()``). Before ``configure()`` that
is a stdout-only logger that creates no file or directory. ``configure()`` closes the
previous logger's files and installs a new one; ``reset()`` closes it and goes back to the
stdout-only default. Tests may call ``reset()`` freely: there is no other module state.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence

from RLA.errors import BackendNotInstalledError, LoggerError
from RLA.logger.core import BACKUP, DEBUG, DISABLED, ERROR, INFO, WARN, Exclude, FormatSpec, Logger
from RLA.logger.formats import make_output_format, output_formats, register_output_format
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.formats.csv import CSVOutputFormat
from RLA.logger.formats.json import JSONOutputFormat
from RLA.logger.formats.log import LogTxtOutputFormat
from RLA.logger.formats.stdout import StdoutOutputFormat
from RLA.logger.readers import read_csv, read_json, read_tb
from RLA.logger.time_step import time_step_holder

#: Formats used by ``configure(dir=...)`` when neither ``format_strs`` nor
#: ``$RLA_LOG_FORMAT`` is given.
DEFAULT_FILE_FORMATS = ("stdout", "log", "csv")
#: Keyword arguments of the original ``configure`` that are accepted and ignored.
_IGNORED_KW = ("framework", "comm", "log_suffix")
_ACCEPTED_KW = ("level", "time_step", "redact")

HumanOutputFormat = LogTxtOutputFormat


class _State:
    """The module's one default instance holder (reset by :func:`reset`)."""

    current: Optional[Logger] = None


def get_current() -> Logger:
    """The logger the module functions use (a stdout-only one until ``configure``)."""
    if _State.current is None or _State.current.closed:
        _State.current = Logger(None, ["stdout"])
    return _State.current


def configure(
    dir: Optional[str] = None,
    format_strs: Optional[Sequence[FormatSpec]] = None,
    hyper_params: Optional[Mapping[str, Any]] = None,
    on_dump: Optional[Callable[[Dict[str, Any]], Any]] = None,
    **kw: Any,
) -> Logger:
    """Close the current logger and install a new one.

    Args:
        dir: the log directory (default ``$RLA_LOGDIR``; without either, no files are
            written and only directory-less formats such as ``stdout`` are allowed).
        format_strs: format names (``LOG_USED``), default ``$RLA_LOG_FORMAT``
            (comma-separated) or ``stdout,log,csv`` with a directory / ``stdout`` without.
        hyper_params: recorded once by the formats that keep them (TensorBoard).
        on_dump: called after every non-empty dump with a copy of the row.
        **kw: ``level``, ``time_step`` (a ``TimeStepHolder``) and ``redact`` (a text →
            text function applied to every line and text value written); the original's
            ``framework``/``comm``/``log_suffix`` are accepted and ignored.

    Returns:
        The new logger (also what :func:`get_current` returns from now on).
    """
    unknown = sorted(set(kw) - set(_IGNORED_KW) - set(_ACCEPTED_KW))
    if unknown:
        raise LoggerError(
            f"logger.configure() got unknown keyword(s) {unknown}",
            expected=f"dir, format_strs, hyper_params, on_dump, {', '.join(_ACCEPTED_KW)}",
            found=", ".join(unknown),
            fix="remove or rename the keyword",
        )
    if dir is None:
        dir = os.environ.get("RLA_LOGDIR") or None
    if format_strs is None:
        env = os.environ.get("RLA_LOG_FORMAT", "")
        format_strs = [f for f in env.split(",") if f] or (
            list(DEFAULT_FILE_FORMATS) if dir is not None else ["stdout"]
        )
    new = Logger(
        dir,
        list(format_strs),
        hyper_params=hyper_params,
        on_dump=on_dump,
        level=kw.get("level", INFO),
        time_step=kw.get("time_step"),
        redact=kw.get("redact"),
    )
    old, _State.current = _State.current, new
    if old is not None:
        old.close()
    return new


def reset() -> None:
    """Close the current logger; the next call uses a fresh stdout-only logger."""
    old, _State.current = _State.current, None
    if old is not None:
        old.close()


@contextlib.contextmanager
def scoped_configure(
    dir: Optional[str] = None, format_strs: Optional[Sequence[FormatSpec]] = None, **kw: Any
) -> Iterator[Logger]:
    """Use a new logger inside a ``with`` block, then restore the previous one (left open)."""
    previous = _State.current
    _State.current = None
    try:
        with Logger(dir, list(format_strs or (DEFAULT_FILE_FORMATS if dir else ["stdout"])), **kw) as scoped:
            _State.current = scoped
            yield scoped
    finally:
        _State.current = previous


# -- recording ----------------------------------------------------------------------------
def logkv(key: str, val: Any, exclude: Exclude = None, freq: Optional[int] = None) -> None:
    """Record ``val`` for ``key`` in the current row (see :meth:`Logger.logkv`)."""
    get_current().logkv(key, val, exclude, freq)


record_tabular = logkv


def logkv_mean(key: str, val: Any) -> None:
    """Record the mean of the values given for ``key`` within the current row."""
    get_current().logkv_mean(key, val)


def logkvs(d: Mapping[str, Any], prefix: str = "", exclude: Exclude = None) -> None:
    """Record every item of ``d``."""
    get_current().logkvs(d, prefix, exclude)


def log_key_value(keys: Sequence[str], values: Sequence[Any], prefix_name: str = "") -> None:
    """Record ``values[i]`` under ``prefix_name + keys[i]``."""
    get_current().log_key_value(keys, values, prefix_name)


def ma_record_tabular(
    key: str,
    val: Any,
    record_len: int,
    ignore_nan: bool = False,
    exclude: Exclude = None,
    freq: Optional[int] = None,
) -> None:
    """Record the moving average of the last ``record_len`` values once that many arrived.

    The argument order is the original's; ``ignore_nan=True`` leaves NaN values out of
    the window (the original accepted the flag but never dropped them).
    """
    get_current().ma_record_tabular(key, val, record_len, exclude=exclude, freq=freq, ignore_nan=ignore_nan)


def dumpkvs() -> Dict[str, Any]:
    """Write the current row to every format; returns it (``{}`` if empty)."""
    return get_current().dumpkvs()


dump_tabular = dumpkvs


def getkvs() -> Dict[str, Any]:
    """A copy of the current, not yet dumped, row."""
    return get_current().getkvs()


def log_from_tf_summary(serialized_summary: Any) -> None:
    """TensorFlow summaries are out of scope in this re-implementation."""
    raise BackendNotInstalledError(
        "logger.log_from_tf_summary needs TensorFlow, which RLA does not support",
        expected="scalars recorded with logger.record_tabular",
        found="a TensorFlow summary",
        fix="record each value with logger.record_tabular(key, value), or use "
        "logger.get_tbx_writer() for images, audio and histograms",
    )


# -- text ---------------------------------------------------------------------------------
def log(*args: Any, level: int = INFO) -> None:
    """Write a text line at ``level``."""
    get_current().log(*args, level=level)


def debug(*args: Any) -> None:
    get_current().debug(*args)


def info(*args: Any) -> None:
    get_current().info(*args)


def warn(*args: Any) -> None:
    """Warn (``[WARN] <time-step> : ...``), also into ``warn.txt``."""
    get_current().warn(*args)


def error(*args: Any) -> None:
    """Report an error line, also into ``warn.txt``."""
    get_current().error(*args)


def backup(*args: Any) -> None:
    """Write a ``[BACKUP]`` line, also into ``backup.txt``."""
    get_current().backup(*args)


def set_level(level: int) -> None:
    """Show text messages at ``level`` and above."""
    get_current().set_level(level)


def get_dir() -> Optional[str]:
    """The current log directory (``None`` before ``configure``)."""
    return get_current().get_dir()


def get_tbx_writer() -> Any:
    """The tensorboardX ``SummaryWriter`` (raises ``LoggerError`` without TensorBoard output)."""
    return get_current().get_tbx_writer()


def timestep() -> int:
    """The current time-step."""
    return get_current().timestep()


# -- profiling (original names) --------------------------------------------------------
class ProfileKV:
    """``with ProfileKV("env_step"):`` adds the elapsed seconds to ``wait_env_step``."""

    def __init__(self, name: str) -> None:
        self.key = "wait_" + name
        self._start = 0.0

    def __enter__(self) -> "ProfileKV":
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        current = get_current()
        elapsed = time.perf_counter() - self._start
        current.logkv(self.key, float(current.getkvs().get(self.key, 0.0)) + elapsed)


def profile(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of :class:`ProfileKV`."""

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with ProfileKV(name):
                return func(*args, **kwargs)

        return wrapper

    return decorator


# -- polixir's shortcuts (time-step, time tracker, no-op MPI hook) ----------------------
def get_time() -> int:
    """The current time-step (``time_step_holder.get_time()``)."""
    return time_step_holder.get_time()


def set_time(ts: int) -> None:
    """Set the current time-step (works before ``configure`` too)."""
    time_step_holder.set_time(ts)


def open_time_tracker(name: str) -> Any:
    """``with logger.open_time_tracker('rollout'):`` times a section with ``RLA.time_tracker``."""
    from RLA.easy_log.time_used_recorder import time_tracker

    return time_tracker(name)


def log_time_tracker() -> None:
    """Record the sections of ``RLA.time_tracker`` for the next dump (kept out of the CSV)."""
    from RLA.easy_log.time_used_recorder import time_tracker

    time_tracker.log()


def set_comm(comm: Any) -> None:
    """Accepted for the original's MPI hook, which never did anything; RLA ignores it."""
    del comm


def valid_float_value(value: Any) -> bool:
    """Whether ``float(value)`` succeeds."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def summary_val(key: str, value: Any) -> Any:
    """A TensorFlow ``Summary.Value``: TensorFlow only."""
    raise BackendNotInstalledError(
        "logger.summary_val builds a TensorFlow summary, and RLA does not support TensorFlow",
        expected="scalars recorded with logger.record_tabular",
        found=f"summary_val({key!r}, ...)",
        fix="call logger.record_tabular(key, value) instead",
    )


def __getattr__(name: str) -> Any:
    # The TensorBoard class is resolved lazily so this module never imports tensorboardX.
    if name == "TensorBoardOutputFormat":
        from RLA.logger.formats.tensorboard import TensorBoardOutputFormat

        return TensorBoardOutputFormat
    if name in ("ma_dict", "lst_print_dict"):
        # The original's module globals live in the current logger: its moving-average
        # windows and its last-recorded steps of freq= keys (read them, do not replace them).
        current = get_current()
        return current._ma if name == "ma_dict" else current._last_record
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEBUG",
    "INFO",
    "WARN",
    "ERROR",
    "DISABLED",
    "BACKUP",
    "Logger",
    "KVWriter",
    "SeqWriter",
    "HumanOutputFormat",
    "StdoutOutputFormat",
    "LogTxtOutputFormat",
    "CSVOutputFormat",
    "JSONOutputFormat",
    "TensorBoardOutputFormat",  # noqa: F822 - loaded lazily by __getattr__ (tensorboardX is heavy)
    "output_formats",
    "make_output_format",
    "register_output_format",
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
    "log_from_tf_summary",
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
    "time_step_holder",
    "ProfileKV",
    "profile",
    "read_csv",
    "read_json",
    "read_tb",
    "get_time",
    "set_time",
    "open_time_tracker",
    "log_time_tracker",
    "set_comm",
    "valid_float_value",
    "summary_val",
]
