"""When a run's files need looking at again, and what a process derives from the index.

A run is *settled* when its ``run.json`` says it ended (or its process is gone) and none of
its files changed for :data:`SETTLE_S` seconds. The index stores, per run, whether it is
settled and when its files were last ``stat``\\ ed (:mod:`RLA.query.refresh`): a query
``stat``\\ s the files of every run that is not settled (so a running run's new rows are
seen at once), and those of a settled run only when its last check is older than
``recheck_s`` (default :data:`RECHECK_S`) or with ``verify=True``. A hand edit of an ended
run's files is therefore seen at once with ``verify=True`` (``rla list --verify``,
``rla index --verify``) and otherwise by the first query of its scope at most
:data:`RECHECK_S` after the run's last check -- in any process, since the time of the last
check is in the index. That time is stored up to a quarter of the period earlier than the
check was made, by a fixed fraction per run (:func:`stamp`): runs checked together come due
over a quarter of an hour, not in the same second, and none later than promised.

:data:`WARM` keeps data derived from the index per data root (the dashboard's sorted
tables, name lists), valid while the index's generation is unchanged; ``WARM.reset()``
forgets it.
"""

from __future__ import annotations

import os
import threading
import time
import zlib
from collections import OrderedDict
from typing import Any, Callable, Optional, Tuple

from RLA.manager.run_info import CRASHED, FINISHED, KILLED
from RLA.query.records import RunRecord

#: Seconds without a change to any indexed file before an ended run counts as settled.
SETTLE_S = 60.0
#: A settled run's files are stat'ed again when its last check is older than this (seconds).
RECHECK_S = 3600.0
#: The check time stored for a run is earlier than the real one by up to this part of the period.
SPREAD = 0.25
#: Data roots remembered per process, and derived items per root (least recently used dropped).
MAX_ROOTS = 16
MAX_ITEMS = 16
_ENDED = (FINISHED, CRASHED, KILLED)


def is_settled(record: RunRecord, newest_mtime_ns: int, now_ns: int) -> bool:
    """Whether a run can no longer change by itself (see the module docstring)."""
    if record.problems or newest_mtime_ns == 0 or now_ns - newest_mtime_ns < SETTLE_S * 1e9:
        return False  # broken, none of its files written yet (a run being created), or recent
    if not record.info:  # legacy or synced-without-run.json runs: quiet files are enough
        return True
    if record.info.get("status") in _ENDED:
        return True
    from RLA.manager.run_info import effective_status

    return effective_status(record.info) in _ENDED


def jitter(key: str) -> float:
    """A fixed number in [0, 1) per run key (stored in the index, see :func:`stamp`)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) / 2**32


def stamp(key: str, now: float, recheck_s: float) -> float:
    """The check time stored for the run ``key`` checked at ``now`` (see the module docstring).

    Earlier by ``SPREAD * recheck_s * jitter(key)``, so runs checked in one query come due
    spread over that span; never later than ``now``, so a run is always checked again at most
    ``recheck_s`` after its real check (by a reader with any period).
    """
    return now - SPREAD * recheck_s * jitter(key)


class WarmCaches:
    """Per-process data derived from the index of each data root, per generation."""

    def __init__(self) -> None:
        self._roots: "OrderedDict[str, OrderedDict[Any, Tuple[int, Any, float]]]" = OrderedDict()
        self._lock = threading.Lock()

    def cached(
        self,
        data_root: os.PathLike,
        key: Any,
        generation: int,
        build: Callable[[], Any],
        max_age: Optional[Callable[[Any], Optional[float]]] = None,
    ) -> Any:
        """``build()``, memoised while the index's ``generation`` stays the same.

        Args:
            max_age: ``max_age(value)`` gives the seconds a value stays usable (None: no limit),
                e.g. a short time for tables holding running runs, whose status changes
                without any file changing.
        """
        root = os.path.abspath(os.fspath(data_root))
        now = time.monotonic()
        with self._lock:
            items = self._roots.setdefault(root, OrderedDict())
            self._roots.move_to_end(root)
            while len(self._roots) > MAX_ROOTS:
                self._roots.popitem(last=False)
            hit = items.get(key)
        if hit is not None and hit[0] == generation:
            age = max_age(hit[1]) if max_age is not None else None
            if age is None or now - hit[2] <= age:
                return hit[1]
        value = build()
        with self._lock:
            items[key] = (generation, value, now)
            items.move_to_end(key)
            while len(items) > MAX_ITEMS:
                items.popitem(last=False)
        return value

    def forget(self, data_root: os.PathLike) -> None:
        """Drop what is remembered of one data root."""
        with self._lock:
            self._roots.pop(os.path.abspath(os.fspath(data_root)), None)

    def reset(self) -> None:
        """Forget every data root."""
        with self._lock:
            self._roots.clear()


#: The process-wide instance.
WARM = WarmCaches()
