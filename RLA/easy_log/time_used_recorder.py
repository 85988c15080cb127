"""polixir's ``RLA.easy_log.time_used_recorder``: the global ``time_tracker`` (``RLA.time_tracker``).

``with time_tracker('rollout'):`` creates the section on first use; ``time_tracker.log()``
records ``time_used/time cost per call/rollout`` and the other statistics. The tracker lives
in ``RLA.trackers.time_used_recorder``; this face re-exports it.
"""

from __future__ import annotations

from RLA.trackers.time_used_recorder import (
    PolixirTimeTracker as TimeTracker,
)
from RLA.trackers.time_used_recorder import (
    SingleTimeTracker,
    rc_start_time,
    time_record,
    time_record_end,
)
from RLA.trackers.time_used_recorder import (
    polixir_time_tracker as time_tracker,
)

__all__ = [
    "SingleTimeTracker",
    "TimeTracker",
    "time_tracker",
    "time_record",
    "time_record_end",
    "rc_start_time",
]
