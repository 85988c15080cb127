"""The run's lifecycle hooks: the services attached to a run and the order they are told in.

A service (code backup, sync, the user's finish callbacks...) is attached to the manager's
:class:`Lifecycle` the way Sacred attaches observers to a run: it overrides the hooks it
needs and gets its dependencies in its constructor, never from the manager.

Order of a run's events, each service in the order it was attached:

1. ``on_start(run)`` once the new run's directories, ``run.json`` and logger exist;
2. ``on_heartbeat(run)`` after each heartbeat written to ``run.json``;
3. ``on_finish(run)`` when the run ends, before its final status is written;
4. ``after_finish(run)`` once ``run.json`` holds the final status.

A service failing at start fails the run's creation (the error is raised as it is, with a
note naming the service); failures at finish are collected, reported and recorded in
``run.json`` (``finish_warnings``) without stopping the other services or the finish.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable, List, Sequence

if TYPE_CHECKING:
    from RLA.manager.run import Run


class RunService:
    """Base of the services attached to a run's lifecycle: every hook does nothing by default."""

    #: Shown in error reports (``while finishing the run: [sync] ...``).
    name = "service"

    def on_start(self, run: "Run") -> None:
        """The new run exists (directories, ``run.json``, logger)."""

    def on_heartbeat(self, run: "Run") -> None:
        """A heartbeat was written to ``run.json`` (called from the heartbeat thread)."""

    def on_finish(self, run: "Run") -> None:
        """The run ends; its final status is not written yet."""

    def after_finish(self, run: "Run") -> None:
        """The run's ``run.json`` holds its final status."""


class Hook(RunService):
    """One callable of the user's, called when the run finishes (``at="finish"``: before the
    final status is written; ``at="after"``: after). Attached for one run only."""

    name = "hook"

    def __init__(self, fn: Callable[[], None], at: str = "finish") -> None:
        self.fn, self.at = fn, at

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hook) and (other.fn, other.at) == (self.fn, self.at)

    def __hash__(self) -> int:
        return hash((self.fn, self.at))

    def on_finish(self, run: "Run") -> None:
        if self.at == "finish":
            self.fn()

    def after_finish(self, run: "Run") -> None:
        if self.at == "after":
            self.fn()


def describe(exc: BaseException) -> str:
    """``Type: message`` (how run.json records an error)."""
    return f"{type(exc).__name__}: {exc}"


class Lifecycle:
    """The services of the current configuration, told about the run's events in order.

    Args:
        services: attached in this order, for every run of the configuration.
    """

    def __init__(self, services: Sequence[RunService] = ()) -> None:
        self.services: List[RunService] = list(services)
        self._once: List[RunService] = []

    def attach(self, service: RunService, once: bool = False) -> None:
        """Tell ``service`` about the next events too, after the services attached before.

        Args:
            service: attached once (an equal service already attached is not added again).
            once: drop it when the current run has finished.
        """
        if service not in self.services and service not in self._once:
            (self._once if once else self.services).append(service)

    def use(self, services: Sequence[RunService]) -> None:
        """Replace the services of the previous configuration (the one-run services stay)."""
        self.services = list(services)

    def _all(self) -> List[RunService]:
        return self.services + self._once

    def start(self, run: "Run") -> None:
        """``on_start`` of each service; the first failure is raised, naming the service."""
        for service in self._all():
            try:
                service.on_start(run)
            except BaseException as exc:
                exc.add_note(f"raised by the run service {service.name!r} while starting run {run.index}")
                raise

    def heartbeat(self, run: "Run") -> None:
        """``on_heartbeat`` of each service; the first failure is raised once all were told."""
        failures: List[BaseException] = []
        for service in self._all():
            try:
                service.on_heartbeat(run)
            except Exception as exc:  # noqa: BLE001 - the other services still get the beat
                exc.add_note(f"raised by the run service {service.name!r} on a heartbeat")
                failures.append(exc)
        if failures:
            raise failures[0]

    def finish(self, run: "Run") -> List[str]:
        """``on_finish`` of each service; returns the failures (``Type: message``), never raises."""
        failures = []
        for service in self._all():
            try:
                service.on_finish(run)
            except Exception as exc:  # noqa: BLE001 - report, then still close the run
                failures.append(describe(exc))
        return failures

    def after_finish(self, run: "Run") -> None:
        """``after_finish`` of each service, then the one-run services are dropped.

        Failures are printed to stderr: the run is over, there is nowhere else to report.
        """
        services, self._once = self._all(), []
        for service in services:
            try:
                service.after_finish(run)
            except Exception as exc:  # noqa: BLE001 - the run is over; report and go on
                print(f"RLA: after finishing {run.index}: {describe(exc)}", file=sys.stderr)


__all__ = ["Hook", "Lifecycle", "RunService", "describe"]
