"""The original ``RLA.trackers.time_used_recorder``: named code-section timers over RLA's TimeTracker.

Example (the original's usage)::

    from RLA.trackers.time_used_recorder import TimeTracker
    tracker = TimeTracker()
    with tracker.add('rollout'):
        collect()
    tracker.log()   # time_used/total calls/rollout ... into the next dump (not the CSV)
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional

from RLA.trackers.time_tracker import TimeTracker as _CoreTracker


class SingleTimeTracker:
    """One named section: ``with`` it to time a call; ``call_time`` and ``time_cost`` add up."""

    def __init__(self, name: str = "untitled", core: Optional[_CoreTracker] = None) -> None:
        self.name = name
        self._core = core if core is not None else _CoreTracker()

    @property
    def call_time(self) -> int:
        """How many times the section ran."""
        return int(self._core.stats(self.name)["calls"])

    @property
    def time_cost(self) -> float:
        """Seconds spent in the section, summed."""
        return float(self._core.stats(self.name)["total"])

    def __enter__(self) -> "SingleTimeTracker":
        self._core.start(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        self._core.stop(self.name)


class TimeTracker:
    """Sections by name, with the original's statistics keys."""

    #: Key of the per-call time (polixir's ``RLA.time_tracker`` says ``time cost per call``).
    per_call_key = "average time cost"

    def __init__(self) -> None:
        self._core = _CoreTracker()
        self.t0 = time.time()
        self.time_dict: Dict[str, SingleTimeTracker] = {}

    def add(self, name: str = "untitled") -> SingleTimeTracker:
        """The section ``name`` (created on first use)."""
        if name not in self.time_dict:
            self.time_dict[name] = SingleTimeTracker(name, self._core)
        return self.time_dict[name]

    def __call__(self, name: str) -> SingleTimeTracker:
        return self.add(name)

    def clear(self) -> None:
        """Forget every section."""
        self._core.reset()
        self.time_dict = {}

    def statistic_entry(self, name: str) -> Dict[str, float]:
        """``total calls/``, ``total time cost/``, per-call and ``time cost percentage/`` of ``name``."""
        if name not in self.time_dict:
            raise KeyError(f"no time tracker named {name!r}; open it with add({name!r}) first")
        stats = self._core.stats(name)
        return {
            f"total calls/{name}": stats["calls"],
            f"total time cost/{name}": stats["total"],
            f"{self.per_call_key}/{name}": stats["per_call"],
            f"time cost percentage/{name}": stats["share"],
        }

    def get_info(self) -> Dict[str, float]:
        """Every section's statistics in one dict."""
        info: Dict[str, float] = {}
        for name in self.time_dict:
            info.update(self.statistic_entry(name))
        return info

    def log(self, exclude_lst: Optional[List[str]] = None) -> None:
        """Record ``time_used/<stat>/<name>`` for the next dump (default: not in the CSV)."""
        from RLA.logger import api as logger

        exclude = ["csv"] if exclude_lst is None else exclude_lst
        for key, value in self.get_info().items():
            logger.record_tabular("time_used/" + key, value, exclude=exclude)
            logger.info(f"[{key}]: {value}")


class PolixirTimeTracker(TimeTracker):
    """polixir's tracker (``RLA.time_tracker``): the per-call key is ``time cost per call``."""

    per_call_key = "time cost per call"


#: polixir's global tracker: ``RLA.time_tracker``, ``logger.open_time_tracker(name)``.
polixir_time_tracker = PolixirTimeTracker()


class _Starts:
    """Start times of :func:`time_record` sections (one per process, like the original)."""

    started: Dict[str, float] = {}


rc_start_time = _Starts.started


def time_record(name: str) -> None:
    """Start timing ``name``; end it with :func:`time_record_end`."""
    if name in _Starts.started:
        raise KeyError(f"time_record({name!r}) is already running; call time_record_end({name!r}) first")
    _Starts.started[name] = time.time()


def time_record_end(name: str) -> float:
    """Stop timing ``name``, record ``time_used/<name>`` and return the seconds."""
    from RLA.logger import api as logger

    elapsed = time.time() - _Starts.started.pop(name)
    logger.record_tabular(f"time_used/{name}", elapsed)
    return elapsed


__all__ = [
    "SingleTimeTracker",
    "TimeTracker",
    "PolixirTimeTracker",
    "polixir_time_tracker",
    "time_record",
    "time_record_end",
    "rc_start_time",
]
