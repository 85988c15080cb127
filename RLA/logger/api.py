"""The module-level logger API (``from RLA import logger``) over the one current ``Logger``.

Every function acts on the current logger (:func:`get_current`). Before :func:`configure`
that is a stdout-only logger that creates no file or directory. ``configure()`` closes the
previous logger's files and installs a new one; :func:`reset` closes it and goes back to the
stdout-only default. Tests may call ``reset()`` freely: there is no other module state.
``RLA.easy_log.logger`` (the original's import path) re-exports these same functions.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence

from RLA.errors import LoggerError
from RLA.logger.core import INFO, Exclude, FormatSpec, Logger

#: Formats used by ``configure(dir=...)`` when neither ``format_strs`` nor
#: ``$RLA_LOG_FORMAT`` is given.
DEFAULT_FILE_FORMATS = ("stdout", "log", "csv")
#: Keyword arguments of the original ``configure`` that are accepted and ignored.
_IGNORED_KW = ("framework", "comm", "log_suffix")
_ACCEPTED_KW = ("level", "time_step", "redact")


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
