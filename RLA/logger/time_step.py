"""The global time-step: the x-axis shared by scalars, TensorBoard, figures and checkpoints."""

from __future__ import annotations

from typing import Callable, List


class TimeStepHolder:
    """Hold the current time-step (an int) and the outer epoch.

    Works before and after any configuration. Listeners (e.g. a TensorBoard writer)
    may subscribe to changes.
    """

    def __init__(self, time: int = 0, epoch: int = 0, tf_log: bool = False) -> None:
        self._time = int(time)
        self._epoch = int(epoch)
        self.tf_log = tf_log
        self._listeners: List[Callable[[int], None]] = []

    def config(self, time: int = 0, epoch: int = 0, tf_log: bool = False) -> None:
        """Reset time and epoch (the original's signature)."""
        self._time = int(time)
        self._epoch = int(epoch)
        self.tf_log = tf_log
        self._notify()

    def set_time(self, time: int) -> None:
        """Set the current time-step."""
        self._time = int(time)
        self._notify()

    def inc_time(self) -> None:
        """Advance the time-step by one."""
        self._time += 1
        self._notify()

    def add_time(self, n: int) -> None:
        """Advance the time-step by ``n``."""
        self._time += int(n)
        self._notify()

    def get_time(self) -> int:
        """The current time-step."""
        return self._time

    def set_outer_epoch(self, epoch: int) -> None:
        self._epoch = int(epoch)

    def get_outer_epoch(self) -> int:
        return self._epoch

    def inc_outer_epoch(self) -> None:
        self._epoch += 1

    def subscribe(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(time)`` after every change."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[int], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener(self._time)


#: The default holder used by the logger, the manager and the recorders.
time_step_holder = TimeStepHolder(0, 0)
