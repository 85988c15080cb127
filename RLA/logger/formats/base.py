"""The output-format contract: ``KVWriter`` (one row per dump) and ``SeqWriter`` (text lines).

A format is a small class that receives finished rows from :class:`RLA.logger.core.Logger`.
It never reaches back into the logger or the experiment manager; the logger hands it a
directory at construction and rows (plus the row's time-step) at every dump.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from RLA.errors import LoggerError


class StagedRow:
    """A row a format has written but can still take back (see :meth:`KVWriter.stage`).

    The logger stages the row in every format that can, then commits all of them, or rolls
    all of them back when one fails: a reader sees the row in every such format or in none.
    """

    def commit(self) -> None:
        """Make the row final; needs no new disk space (nothing, or a rename)."""

    def rollback(self) -> None:
        """Leave the files as they were before the row (also after :meth:`commit` of an append)."""


def _default_warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


class KVWriter:
    """Base class of every key/value output format (SB3's ``KVWriter`` shape).

    Subclasses implement :meth:`write` and, if they hold a resource, :meth:`_close`.
    ``close()`` is idempotent and the writer is a context manager.

    Attributes:
        name: the format name the logger knows this writer by; ``exclude`` compares
            against it exactly. The logger sets it to the registered name when unset.
        warn_fn: where the writer reports non-fatal problems (the logger points it to
            its own ``warn``, so they land in ``warn.txt``).
    """

    name: str = ""

    def __init__(self) -> None:
        self.closed = False
        self.warn_fn: Callable[[str], None] = _default_warn

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        """Write one dumped row.

        Args:
            kvs: key -> value (python scalars, strings, or other objects); the logger
                already removed keys excluded for this format and added ``time-step``
                and ``timestamp``.
            step: the row's time-step (the x-axis).
        """
        raise NotImplementedError

    def stage(self, kvs: Mapping[str, Any], step: int) -> Optional[StagedRow]:
        """Write one row so that it can still be taken back; ``None`` if this format cannot.

        The logger stages a row in every format first and commits only when all staged it;
        formats returning ``None`` (the default, e.g. TensorBoard, stdout) get the row by
        :meth:`write` after that commit. A format that stages must leave its files as they
        were when ``stage`` raises.
        """
        return None

    def write_hyper_params(self, hyper_params: Mapping[str, Any]) -> None:
        """Record the run's hyper-parameters once (default: ignore them)."""

    def set_total_steps(self, total: Optional[int]) -> None:
        """The time-step the run is expected to reach, for progress displays (default: ignore it)."""

    def flush(self) -> None:
        """Push buffered data to the operating system (default: nothing buffered)."""

    def _close(self) -> None:
        """Release resources; called once by :meth:`close`."""

    def close(self) -> None:
        """Flush and release resources. Safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        self._close()

    def _check_open(self) -> None:
        if self.closed:
            raise LoggerError(
                f"The {self.name or type(self).__name__} output format is closed",
                expected="an open writer",
                found="write after close()",
                fix="configure the logger again before logging",
            )

    def __enter__(self) -> "KVWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort: never leave buffers unflushed
        try:
            if not getattr(self, "closed", True):
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class SeqWriter:
    """Mixin of formats that also show free text lines (``logger.log``/``warn``...)."""

    def write_sequence(self, lines: Sequence[str]) -> None:
        """Write text lines (without trailing newlines)."""
        raise NotImplementedError


def require_dir(log_dir: Optional["os.PathLike[str] | str"], fmt: str) -> Path:
    """Return ``log_dir`` as a created :class:`Path`, or raise if the format has no directory."""
    if log_dir is None:
        raise LoggerError(
            f"The {fmt!r} output format writes files but no log directory was given",
            expected="configure(dir=<a directory>, ...)",
            found="dir=None",
            fix=f"pass a directory, or drop {fmt!r} from format_strs",
        )
    path = Path(log_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def format_hyper_params_markdown(hyper_params: Mapping[str, Any]) -> str:
    """A two-column markdown table of hyper-parameters, sorted by key."""
    rows = ["| key | value |", "|---|---|"]
    for key in sorted(hyper_params, key=str):
        value = str(hyper_params[key]).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {key} | {value} |")
    return "\n".join(rows)


def is_numeric(value: Any) -> bool:
    """True for values TensorBoard-like scalar sinks accept (bool, int, float)."""
    return type(value) in _NUMERIC_TYPES or isinstance(value, (int, float))


_NUMERIC_TYPES = (float, int, bool)

#: A factory the registry can hold: ``factory(log_dir) -> KVWriter``.
FormatFactory = Callable[[Optional[str]], KVWriter]

__all__ = [
    "KVWriter",
    "SeqWriter",
    "StagedRow",
    "FormatFactory",
    "require_dir",
    "format_hyper_params_markdown",
    "is_numeric",
]
