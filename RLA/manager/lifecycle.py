"""Process-exit plumbing for runs: heartbeat thread, atexit, excepthook and SIGTERM."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import traceback
import weakref
from typing import Any, Callable, Optional

from RLA.manager.run_info import CRASHED, KILLED


def _report_to_stderr(exc: BaseException) -> None:
    print(
        f"rla: the run's heartbeat could not be written ({type(exc).__name__}: {exc}); while this "
        "lasts, readers will report the run as crashed once its heartbeat is stale",
        file=sys.stderr,
    )


class Heartbeat:
    """A daemon thread calling ``beat()`` every ``interval`` seconds until closed.

    A failing beat never stops training; it is reported through ``on_error`` (stderr by default)
    once per distinct failure, and again after a beat that succeeded in between.
    """

    def __init__(
        self,
        beat: Callable[[], None],
        interval: float,
        on_error: Callable[[BaseException], None] = _report_to_stderr,
    ) -> None:
        self._beat = beat
        self._interval = interval
        self._on_error = on_error
        self._last_error: Optional[str] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rla-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.beat_once()

    def beat_once(self) -> None:
        """One beat; a failure is reported (see the class docstring), never raised."""
        try:
            self._beat()
        except Exception as exc:  # noqa: BLE001 - a failed heartbeat must never kill training
            key = f"{type(exc).__name__}: {exc}"
            if key != self._last_error:
                self._last_error = key
                try:
                    self._on_error(exc)
                except Exception:  # noqa: BLE001 - the reporter itself must not kill the thread
                    pass
        else:
            self._last_error = None

    def close(self) -> None:
        """Stop the thread (idempotent)."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "Heartbeat":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ExitWatcher:
    """Finish the watched runs with the right status when the process ends.

    Anything with ``finish(status=, exit_code=, error=)`` can be watched (the manager's
    :class:`RLA.manager.runner.Runner`); it is held by a weak reference.

    * normal exit → ``finished`` (exit code 0),
    * an uncaught exception → ``crashed`` with the traceback's last line,
    * ``KeyboardInterrupt`` or SIGTERM → ``killed``.
    SIGKILL cannot be caught: the stale heartbeat reveals it later.
    """

    def __init__(self) -> None:
        self._managers: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._installed = False
        self._previous_hook: Optional[Callable[..., Any]] = None

    def watch(self, owner: Any) -> None:
        """Finish ``owner``'s run when the process ends."""
        self._managers.add(owner)
        if not self._installed:
            self._install()

    def _install(self) -> None:
        self._installed = True
        atexit.register(self._at_exit)
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook
        if threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                    signal.signal(signal.SIGTERM, self._on_sigterm)
            except (ValueError, OSError):
                pass

    def _finish_all(self, status: Optional[str], exit_code: Optional[int], error: Optional[str]) -> None:
        for manager in list(self._managers):
            try:
                manager.finish(status=status, exit_code=exit_code, error=error)
            except Exception:  # noqa: BLE001 - exiting anyway
                traceback.print_exc()

    def _excepthook(self, exc_type: type, exc: BaseException, tb: Any) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self._finish_all(KILLED, 130, "KeyboardInterrupt")
        else:
            last = traceback.format_exception_only(exc_type, exc)[-1].strip()
            self._finish_all(CRASHED, 1, last)
        hook = self._previous_hook or sys.__excepthook__
        hook(exc_type, exc, tb)

    def _at_exit(self) -> None:
        self._finish_all(None, None, None)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        self._finish_all(KILLED, 128 + signum, "terminated by SIGTERM")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


#: One watcher per process.
exit_watcher = ExitWatcher()
