"""The event files under the ``tensorboard`` format: writes that survive a full disk, flush barriers.

tensorboardX writes events from a background thread; if a write raises (a full disk), the
thread dies and, once its queue is full, the training blocks forever on the next event.
tensorboardX's public extension point for storage, ``record_writer.register_writer_factory``
(how it writes to S3 and GCS), lets RLA give it the file object it writes into: an
:class:`EventSink` that keeps the first error for the training thread and drops later
records instead of raising in tensorboardX's thread.

The sink also answers "has every event queued so far reached the file?" without polling:
:meth:`EventSink.barrier` names a marker event; the writer queues it like any other event
and the sink, on receiving it, drops it (it never reaches the file) and sets the barrier's
``threading.Event``. The event queue is first-in first-out, so every event queued before
the marker has been written by then.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import uuid
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from RLA.fs import as_disk_full

#: The path prefix routed to :class:`SinkFactory` (``rla-events:/abs/dir``).
PREFIX = "rla-events"
#: Markers are small events; a record longer than this is never a marker.
_MARKER_MAX_BYTES = 256
_MARKER_TAG = b"rla-flush-barrier:"
_HEADER = struct.Struct("<Q")  # TFRecord: length, crc(length), data, crc(data)


def routed(path: str) -> str:
    """``path`` spelled so tensorboardX opens its event files through :class:`SinkFactory`."""
    return f"{PREFIX}:{os.path.abspath(path)}"


def real_path(path: str) -> str:
    """The filesystem path of a :func:`routed` path (other paths unchanged)."""
    head = PREFIX + ":"
    return path[len(head) :] if path.startswith(head) else path


class EventSink:
    """The file tensorboardX's ``RecordWriter`` writes one event file into.

    Records are written whole; after the first failed write or flush the error is kept
    (:attr:`failure`) and every later record is dropped, so the file ends at most in one torn
    record and tensorboardX's thread keeps draining its queue.

    Args:
        path: the event file to create (as tensorboardX names it).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.failure: Optional[BaseException] = None
        self.closed = False
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close(), like tensorboardX's own file
        self._pending = bytearray()
        self._lock = threading.Lock()
        self._barriers: Dict[bytes, threading.Event] = {}

    def barrier(self) -> Tuple[str, threading.Event]:
        """A marker text for one event and the ``threading.Event`` set when that event arrives."""
        token = _MARKER_TAG + uuid.uuid4().hex.encode("ascii")
        done = threading.Event()
        with self._lock:
            self._barriers[token] = done
        return token.decode("ascii"), done

    def write(self, data: bytes) -> None:
        """Take bytes of framed records (tensorboardX writes one record in several pieces)."""
        with self._lock:
            self._pending += data
            for record, payload in self._complete_records():
                if len(payload) <= _MARKER_MAX_BYTES and self._release_barrier(payload):
                    continue  # a barrier marker: it never reaches the file
                self._guarded(self._file.write, record)

    def _complete_records(self) -> Iterator[Tuple[bytes, bytes]]:
        pending = self._pending
        while len(pending) >= _HEADER.size:
            (length,) = _HEADER.unpack_from(pending)
            total = _HEADER.size + 4 + length + 4
            if len(pending) < total:
                return
            record = bytes(pending[:total])
            del pending[:total]
            yield record, record[_HEADER.size + 4 : _HEADER.size + 4 + length]

    def _release_barrier(self, payload: bytes) -> bool:
        if _MARKER_TAG not in payload:
            return False
        for token, done in list(self._barriers.items()):
            if token in payload:
                del self._barriers[token]
                done.set()
                return True
        return False

    def _guarded(self, call: Callable[..., object], *args: bytes) -> None:
        if self.failure is not None or self.closed:
            return  # the file may end in a torn record: append nothing after it
        try:
            call(*args)
        except Exception as exc:  # noqa: BLE001 - raised in the training thread instead
            self.failure = as_disk_full(exc, self.path)

    def _sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def flush(self) -> None:
        """Push the written records to the disk (``fsync``, as tensorboardX does)."""
        with self._lock:
            self._guarded(self._sync)

    def close(self) -> None:
        """Flush and close the file; release any waiting barrier. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self._guarded(self._sync)
            self.closed = True
            with contextlib.suppress(OSError):  # the failure (if any) is already kept
                self._file.close()
            for done in self._barriers.values():
                done.set()
            self._barriers.clear()


class SinkFactory:
    """tensorboardX's writer factory for :data:`PREFIX` paths (``open`` and ``directory_check``)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def open(self, path: str) -> EventSink:
        sink = EventSink(real_path(path))
        opened: Optional[List[EventSink]] = getattr(self._local, "opened", None)
        if opened is not None:
            opened.append(sink)
        return sink

    def directory_check(self, path: str) -> None:
        os.makedirs(real_path(path), exist_ok=True)

    @contextlib.contextmanager
    def collect(self) -> Iterator[List[EventSink]]:
        """The sinks this thread opens inside the block (a new ``SummaryWriter`` opens one)."""
        previous = getattr(self._local, "opened", None)
        opened: List[EventSink] = []
        self._local.opened = opened
        try:
            yield opened
        finally:
            self._local.opened = previous


_FACTORY = SinkFactory()


def sink_factory() -> SinkFactory:
    """The factory, registered with tensorboardX for :data:`PREFIX` on first use."""
    from tensorboardX.record_writer import register_writer_factory

    register_writer_factory(PREFIX, _FACTORY)  # idempotent: the same object each time
    return _FACTORY
