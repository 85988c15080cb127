"""``BackgroundSyncer``: pushes runs from a daemon thread so training never waits.

Requests go through a queue to one daemon thread; a request already waiting absorbs new
ones (the next push sends everything anyway). Errors and warnings raised in the thread
are kept and handed over on the caller's thread: warnings at the next :meth:`submit` or
at :meth:`close`, errors at :meth:`close` (which flushes the queue first).
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, List, Optional, Sequence

from RLA.errors import RLAError, SyncError
from RLA.layout import RunLayout
from RLA.sync.syncer import RunSyncer, SyncReport

_STOP = object()


class BackgroundSyncer:
    """Run :meth:`RunSyncer.push` on a daemon thread.

    Args:
        syncer: does the work; its ``warn`` is redirected to be delivered on the caller's thread.
        warn: receives warnings and error messages on the caller's thread.

    Example::

        with BackgroundSyncer(RunSyncer(settings, data_root), warn=print) as bg:
            bg.submit([layout])     # returns at once
        # leaving the block flushed the queue and raised SyncError if a push failed
    """

    def __init__(self, syncer: RunSyncer, warn: Optional[Callable[[str], None]] = None) -> None:
        self.syncer = syncer
        self._warn = warn
        self._queue: "queue.Queue[object]" = queue.Queue()
        self._lock = threading.Lock()
        self._waiting = False
        self._messages: List[str] = []
        self._errors: List[RLAError] = []
        self.reports: List[SyncReport] = []
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        syncer.warn = self._defer

    def _defer(self, message: str) -> None:
        with self._lock:
            self._messages.append(message)

    def _deliver(self) -> None:
        with self._lock:
            messages, self._messages = self._messages, []
        if self._warn is not None:
            for message in messages:
                self._warn(message)

    def submit(self, runs: Sequence[RunLayout]) -> None:
        """Ask for a push of ``runs``; returns immediately.

        Raises:
            SyncError: the syncer is closed.
        """
        if self._closed:
            raise SyncError(
                "The background syncer is closed",
                expected="submit() before close()",
                found="submit() after close()",
                fix="create a new BackgroundSyncer",
            )
        self._deliver()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rla-sync", daemon=True)
            self._thread.start()
        with self._lock:
            if self._waiting:
                return
            self._waiting = True
        self._queue.put(list(runs))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):  # flush() marker: all earlier pushes are done
                item.set()
                continue
            with self._lock:
                self._waiting = False
            try:
                report = self.syncer.push(item)  # type: ignore[arg-type]
                with self._lock:
                    self.reports.append(report)
            except RLAError as exc:
                self._record(exc)
            except Exception as exc:  # noqa: BLE001 - a thread must not die silently
                self._record(
                    SyncError(
                        "Background sync failed unexpectedly",
                        expected="a successful push",
                        found=f"{type(exc).__name__}: {exc}",
                        fix="report this as a bug",
                    )
                )

    def _record(self, exc: RLAError) -> None:
        with self._lock:
            self._errors.append(exc)
            self._messages.append(f"background sync failed: {exc}")

    @property
    def errors(self) -> List[RLAError]:
        """Errors raised by pushes so far."""
        with self._lock:
            return list(self._errors)

    def flush(self, timeout: Optional[float] = None) -> None:
        """Wait until every submitted push has run (``timeout`` seconds at most)."""
        if self._thread is None:
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def close(self, raise_errors: bool = True) -> None:
        """Flush the queue, stop the thread, deliver warnings, then raise the first error.

        Idempotent. Raises:
            SyncError: a background push failed (unless ``raise_errors`` is false).
        """
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
        self._deliver()
        errors = self.errors
        if errors and raise_errors:
            first = errors[0]
            raise SyncError(
                f"{len(errors)} background sync(s) failed; the first: {first.problem}",
                expected=first.expected,
                found=first.found,
                fix=first.fix,
            ) from first

    def __enter__(self) -> "BackgroundSyncer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
