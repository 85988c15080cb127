"""polixir's ``RLA.easy_log.time_used_recorder``: the global ``time_tracker`` (``RLA.time_tracker``).

``with time_tracker('rollout'):`` creates the section on first use; ``time_tracker.log()``
records ``time_used/time cost per call/rollout`` and the other statistics.
"""

from __future__ import annotations

from RLA.trackers import time_used_recorder as _recorder
from RLA.trackers.time_used_recorder import SingleTimeTracker, rc_start_time, time_record, time_record_end


class TimeTracker(_recorder.TimeTracker):
    """polixir's tracker: the per-call key is ``time cost per call``."""

    per_call_key = "time cost per call"


time_tracker = TimeTracker()

__all__ = [
    "SingleTimeTracker",
    "TimeTracker",
    "time_tracker",
    "time_record",
    "time_record_end",
    "rc_start_time",
]
