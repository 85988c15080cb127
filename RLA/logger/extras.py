"""The original logger module's names beyond recording: profiling, polixir's shortcuts, TensorFlow stubs.

Exported by ``RLA.logger`` next to :mod:`RLA.logger.api`, so scripts of the original that
call ``logger.ProfileKV``, ``logger.get_time()`` or ``logger.set_comm(comm)`` keep working.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

from RLA.errors import BackendNotInstalledError
from RLA.logger.api import get_current
from RLA.logger.time_step import time_step_holder


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
    from RLA.trackers.time_used_recorder import polixir_time_tracker as time_tracker

    return time_tracker(name)


def log_time_tracker() -> None:
    """Record the sections of ``RLA.time_tracker`` for the next dump (kept out of the CSV)."""
    from RLA.trackers.time_used_recorder import polixir_time_tracker as time_tracker

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


def log_from_tf_summary(serialized_summary: Any) -> None:
    """TensorFlow summaries are out of scope in this re-implementation."""
    raise BackendNotInstalledError(
        "logger.log_from_tf_summary needs TensorFlow, which RLA does not support",
        expected="scalars recorded with logger.record_tabular",
        found="a TensorFlow summary",
        fix="record each value with logger.record_tabular(key, value), or use "
        "logger.get_tbx_writer() for images, audio and histograms",
    )
