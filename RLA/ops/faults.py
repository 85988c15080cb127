"""Fault points of run operations: a test stops the process at a named step, for sure.

Random kill times rarely land in a window a few microseconds wide; a fault point does. Set
``RLA_OPS_FAULT=<point>`` (the first time the point is reached) or ``<point>:<n>`` (the
n-th time) and the operation ends there with ``os._exit`` (no cleanup, no ``finally``),
exactly as a SIGKILL would. Unset, a fault point costs one dictionary lookup.

Points, in the order an operation reaches them: ``journal-written``, ``file-copied`` (after
each file a copy writes under its partial name), ``staged`` (a copy sits complete under its
partial name, or a purged folder under its to-be-deleted name),
``step-done`` (after each data type), ``run-done`` (after each run, ``run.json``
rewritten), ``before-journal-removed``.
"""

from __future__ import annotations

import os
from typing import Dict

FAULT_ENV = "RLA_OPS_FAULT"
#: Exit status of a process stopped at a fault point.
FAULT_STATUS = 86
POINTS = ("journal-written", "file-copied", "staged", "step-done", "run-done", "before-journal-removed")


class FaultCounter:
    """How many times each point was reached in this process (reset with :meth:`reset`)."""

    def __init__(self) -> None:
        self.hits: Dict[str, int] = {}

    def reset(self) -> None:
        self.hits.clear()

    def reach(self, point: str) -> None:
        """Stop the process here when ``$RLA_OPS_FAULT`` names this point (and this hit)."""
        spec = os.environ.get(FAULT_ENV)
        if not spec:
            return
        name, _, nth = spec.partition(":")
        if name != point:
            return
        self.hits[point] = self.hits.get(point, 0) + 1
        if self.hits[point] == int(nth or 1):
            os._exit(FAULT_STATUS)


#: The process's counter (tests in one process call ``COUNTER.reset()``).
COUNTER = FaultCounter()
fault_point = COUNTER.reach
