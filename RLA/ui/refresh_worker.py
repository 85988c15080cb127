"""The dashboard's index refresh in a child process (the server's threads never wait on it).

Refreshing the index ``stat``\\ s every run that is not settled yet, in a Python loop: right
after 10,000 runs were written that is a second of CPU holding the interpreter lock, during
which the server's request threads would crawl. :class:`RefreshWorker` runs
:meth:`RLA.query.Catalog.refresh` in a child process instead (started on first use, ended
with the server; it ends by itself when the server's end of the pipe closes), and the server
only reads the index file the child brought up to date.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.query.records import RunRecord

#: What one refresh reports: the damaged runs, the undecodable folders, whether the index
#: lives in memory (then only the child could read it).
Result = Tuple[Dict[str, RunRecord], List[str], bool]
#: Seconds to wait for the child to stop before it is killed.
STOP_S = 10.0
#: Seconds between the child's checks that the server still runs.
POLL_S = 1.0


def _serve(data_root: str, conn: Any) -> None:
    """The child's loop: one refresh per request, until told to stop or the pipe closes."""
    from RLA.query import Catalog

    parent = os.getppid()
    while True:
        try:
            while not conn.poll(POLL_S):
                if os.getppid() != parent:  # the server is gone (killed): so is the reason to run
                    return
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        try:
            with Catalog(Path(data_root)) as catalog:
                damaged = catalog.refresh(None, None)
                conn.send(("ok", (dict(damaged), list(catalog.undecodable), catalog.in_memory)))
        except Exception as exc:  # the server refreshes in its own process to report it
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class WorkerError(RuntimeError):
    """The child could not refresh (it died, or the refresh failed there)."""


class RefreshWorker:
    """One child process refreshing the index of ``data_root`` on request (thread-safe)."""

    def __init__(self, data_root: os.PathLike) -> None:
        self.data_root = os.fspath(data_root)
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Any = None
        self._atexit = False

    def refresh(self) -> Result:
        """Refresh the index in the child; raises :class:`WorkerError` when it cannot."""
        with self._lock:
            try:
                if self._process is None or not self._process.is_alive():
                    self._start()
                self._conn.send("refresh")
                status, payload = self._conn.recv()
            except (EOFError, OSError) as exc:
                self._stop()
                raise WorkerError(f"the refresh process ended ({exc!r})") from exc
        if status != "ok":
            raise WorkerError(str(payload))
        return payload  # type: ignore[no-any-return,unused-ignore]  # the tuple _serve sent

    def _start(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # the server has threads: never fork it
        self._conn, child = context.Pipe()
        # Not a daemon: a cold build of a large index reads runs in processes of its own. The
        # child ends when its end of the pipe closes; atexit closes it before multiprocessing
        # joins its children at exit.
        self._process = context.Process(target=_serve, args=(self.data_root, child), name="rla-ui-refresh")
        self._process.start()
        child.close()
        if not self._atexit:
            atexit.register(self.close)
            self._atexit = True

    def _stop(self) -> None:
        process, conn, self._process, self._conn = self._process, self._conn, None, None
        if conn is not None:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        if process is not None:
            process.join(STOP_S)
            if process.is_alive():
                process.kill()
                process.join(STOP_S)

    def close(self) -> None:
        """Stop the child (idempotent)."""
        with self._lock:
            self._stop()

    @property
    def pid(self) -> Optional[int]:
        """The child's process id while it runs."""
        return self._process.pid if self._process is not None else None
