"""Asynchronous point-in-time saves: copy-on-write of pending chunks, errors re-raised.

The state is captured under the buffer lock when ``dumps_async`` is called. Chunks that
still have to be written are protected: the first ``add`` that would overwrite one copies it
first, so the snapshot equals the buffer at the call. Extra memory is bounded by the chunks
overwritten during the save (plus the small sampler arrays), never a copy of the buffer.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - its exit hook must be registered first
import sys
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.snapshot.save import SaveOptions, captured, run_save

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

_LIVE: "weakref.WeakSet[SaveHandle]" = weakref.WeakSet()


class SaveHandle:
    """A running background save. ``wait()`` returns the snapshot path or re-raises."""

    def __init__(self) -> None:
        self._thread: Optional[threading.Thread] = None
        self._result: Optional[Path] = None
        self._error: Optional[BaseException] = None
        self._reported = False
        self.cow_bytes = 0  # bytes copied to keep the snapshot point-in-time

    def done(self) -> bool:
        return self._thread is not None and not self._thread.is_alive()

    def wait(self, timeout: Optional[float] = None) -> Optional[Path]:
        """Block until durable; re-raise the background error if the save failed."""
        assert self._thread is not None
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise ReplayBufferError(
                "The background save is still running",
                expected=f"completion within {timeout} s",
                found="still writing",
                fix="wait longer",
            )
        self._reported = True
        if self._error is not None:
            raise self._error
        return self._result

    def drain(self) -> None:
        """Wait; raise the error only if nobody has seen it yet."""
        if self._thread is None:
            return
        self._thread.join()
        if self._error is not None and not self._reported:
            self._reported = True
            raise self._error


class _CowState:
    def __init__(self, buf: "ReplayBuffer", todo: List[Any], names: List[str]) -> None:
        self.buf = buf
        self.names = names
        self.ranges = {c: (s, e) for c, s, e, _ in todo}
        self.pending: Set[int] = set(self.ranges)
        self.copies: Dict[int, List[np.ndarray]] = {}
        self.copied_bytes = 0

    def guard(self, chunks: np.ndarray) -> None:
        """Called by ``add`` (under the lock) before it overwrites ``chunks``."""
        for c in chunks.tolist():
            if c in self.pending and c not in self.copies:
                s, e = self.ranges[c]
                self.copies[c] = [
                    np.array(self.buf.storage.arrays[name][s:e], copy=True) for name in self.names
                ]
                self.copied_bytes += sum(a.nbytes for a in self.copies[c])

    @contextmanager
    def source(self, chunk: int, start: int, end: int) -> Iterator[List[np.ndarray]]:
        with self.buf.lock:
            copy = self.copies.pop(chunk, None)
            self.pending.discard(chunk)
            if copy is None:  # unchanged since the call: write the live rows under the lock
                yield [self.buf.storage.arrays[name][start:end] for name in self.names]
                return
        yield copy


def start_async_save(buf: "ReplayBuffer", path: Any, options: SaveOptions) -> SaveHandle:
    """Capture now, write in a daemon thread; see :class:`save.SaveOptions` for the options."""
    handle = SaveHandle()
    with captured(buf, path, options) as job:
        cow = _CowState(buf, job.cap.todo, job.cap.header["segment_fields"])
        buf.cow_hook = cow.guard

    def work() -> None:
        try:
            handle._result = run_save(buf, job, cow.source, options)
        except BaseException as exc:  # noqa: BLE001 - surfaced by wait()/next call/close
            handle._error = exc
        finally:
            with buf.lock:
                if buf.cow_hook == cow.guard:
                    buf.cow_hook = None
                handle.cow_bytes = cow.copied_bytes
                cow.copies.clear()

    handle._thread = threading.Thread(target=work, name="rla-replay-save", daemon=True)
    _LIVE.add(handle)
    handle._thread.start()
    return handle


def _drain_at_exit() -> None:
    """Finish pending saves at interpreter exit so no snapshot is lost silently."""
    for handle in list(_LIVE):
        try:
            handle.drain()
        except BaseException as exc:  # noqa: BLE001 - report, exit continues
            print(f"RLA replay buffer: background save failed: {exc}", file=sys.stderr)


# The drain must run before concurrent.futures shuts its executors down at exit (a save
# still uses thread pools). threading's exit hooks run before atexit's, newest first, so
# registering after concurrent.futures.thread is imported puts the drain ahead of it. atexit
# remains the fallback where that hook does not exist.
_register = getattr(threading, "_register_atexit", None)
if _register is not None:
    _register(_drain_at_exit)
else:  # pragma: no cover - Python without threading._register_atexit
    atexit.register(_drain_at_exit)
