"""TimeTracker: calls, total, per-call time and share of wall time of named code sections."""

from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, TypeVar

from RLA.errors import RLAError

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class SectionStats:
    """Accumulated timing of one section."""

    calls: int = 0
    total: float = 0.0

    @property
    def per_call(self) -> float:
        return self.total / self.calls if self.calls else 0.0


class TimeTracker:
    """Time named sections; report them as a dict or through the logger.

    Example::

        tracker = TimeTracker()
        with tracker("rollout"):
            collect()
        tracker.log()   # time_used/rollout/{calls,total,per_call,share} into the next dump

    Args:
        clock: a monotonic clock (``time.perf_counter``); tests may pass a fake one.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._stats: Dict[str, SectionStats] = {}
        self._open: Dict[str, float] = {}
        self._origin = clock()

    def start(self, name: str) -> None:
        """Start timing ``name``.

        Raises:
            RLAError: ``name`` is already being timed.
        """
        if name in self._open:
            raise RLAError(
                f"Section {name!r} is already being timed",
                expected="stop() before start() again",
                found="a second start()",
                fix="use `with tracker(name):` to pair them",
            )
        self._open[name] = self._clock()

    def stop(self, name: str) -> float:
        """Stop timing ``name``; returns the seconds of this call."""
        if name not in self._open:
            raise RLAError(
                f"Section {name!r} was not started",
                expected=f"start({name!r}) first",
                found="stop() without start()",
                fix="use `with tracker(name):` to pair them",
            )
        used = self._clock() - self._open.pop(name)
        stats = self._stats.setdefault(name, SectionStats())
        stats.calls += 1
        stats.total += used
        return used

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """``with tracker("name"):`` times the block (also when it raises)."""
        self.start(name)
        try:
            yield
        finally:
            self.stop(name)

    track = __call__

    def profile(self, name: Optional[str] = None) -> Callable[[F], F]:
        """Decorator timing every call of a function (under ``name`` or its qualified name)."""

        def wrap(func: F) -> F:
            section = name or func.__qualname__

            @functools.wraps(func)
            def timed(*args: Any, **kwargs: Any) -> Any:
                with self(section):
                    return func(*args, **kwargs)

            return timed  # type: ignore[return-value]

        return wrap

    def stats(self, name: str) -> Dict[str, float]:
        """``{"calls", "total", "per_call", "share"}`` of one section (share of the wall time since reset)."""
        stats = self._stats.get(name, SectionStats())
        wall = max(self._clock() - self._origin, 1e-12)
        return {
            "calls": stats.calls,
            "total": stats.total,
            "per_call": stats.per_call,
            "share": stats.total / wall,
        }

    def summary(self) -> Dict[str, Dict[str, float]]:
        """The stats of every section, by name."""
        return {name: self.stats(name) for name in sorted(self._stats)}

    def log(
        self, record: Any = None, prefix: str = "time_used/", exclude: Optional[Sequence[str]] = None
    ) -> Dict[str, float]:
        """Record every section's stats as scalars ``<prefix><name>/<stat>`` for the next dump.

        Args:
            record: the logger module/``Logger`` (anything with ``record_tabular``) or a
                ``record(key, value)`` function; default the RLA logger.
            exclude: output formats to skip (e.g. ``["csv"]`` keeps them out of progress.csv).
        """
        if record is None:
            from RLA.logger import api as record
        write = record.record_tabular if hasattr(record, "record_tabular") else record
        flat: Dict[str, float] = {}
        for name, stats in self.summary().items():
            for key, value in stats.items():
                flat[f"{prefix}{name}/{key}"] = value
        for key, value in flat.items():
            if exclude is not None and hasattr(record, "record_tabular"):
                write(key, value, exclude=exclude)
            else:
                write(key, value)
        return flat

    def reset(self) -> None:
        """Forget every section and restart the wall clock."""
        self._stats.clear()
        self._open.clear()
        self._origin = self._clock()


#: A process-wide tracker for scripts (tests create their own).
time_tracker = TimeTracker()
