"""The ``tensorboard`` output format: scalars and hyper-parameters as TensorBoard events (tb/)."""

from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Mapping, Optional

from RLA.errors import BackendNotInstalledError
from RLA.fs import as_disk_full
from RLA.logger.formats.base import KVWriter, format_hyper_params_markdown, require_dir

TB_DIR = "tb"
#: Row columns that are the x-axis / wall time of every event already.
AXIS_KEYS = frozenset({"time-step", "timestamp"})
_NUMERIC = (float, int, bool)


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


class TensorBoardOutputFormat(KVWriter):
    """Write numeric values as TensorBoard scalars at ``step = time-step``.

    All scalars of one dump go into a single event (one protobuf, one queue entry),
    which TensorBoard reads exactly like separate ``add_scalar`` calls. Non-numeric
    values (strings, arrays) are skipped with one warning per key. ``time-step`` and
    ``timestamp`` are not written: they are every event's step and wall time.

    Events are written by tensorboardX's background thread, after the text formats hold
    the row. If that thread fails (a full disk), the error is raised once by the next
    dump or flush (a :class:`RLA.errors.DiskFullError` naming the event file) and later
    events are dropped; without this tensorboardX's thread died and, ten events later,
    the training blocked forever on its full queue.

    Args:
        log_dir: the run's log directory; events go to ``<log_dir>/tb``.
        subdir: sub-directory name for the events.
        flush_secs: how often tensorboardX's writer thread flushes to disk.
    """

    name = "tensorboard"

    def __init__(self, log_dir: Optional[str], subdir: str = TB_DIR, flush_secs: int = 30) -> None:
        super().__init__()
        try:
            from tensorboardX import SummaryWriter
            from tensorboardX.proto.summary_pb2 import Summary
        except ImportError as exc:
            raise BackendNotInstalledError(
                "The 'tensorboard' output format needs tensorboardX",
                expected="tensorboardX importable",
                found=str(exc),
                fix="pip install tensorboardX, or remove 'tensorboard' from LOG_USED",
            ) from exc
        try:
            from tensorboardX.summary import _clean_tag as clean_tag
        except ImportError:  # older/newer tensorboardX: tags are used as given

            def clean_tag(tag: str) -> str:
                return tag

        self._Summary = Summary
        self._clean_tag = clean_tag
        self.dir = require_dir(log_dir, self.name) / subdir
        self.writer = SummaryWriter(logdir=str(self.dir), flush_secs=flush_secs)
        get_fw = getattr(self.writer, "_get_file_writer", None)
        self._file_writer = get_fw() if get_fw is not None else None
        self._tags: Dict[str, str] = {}
        self._skipped: set = set()
        self._hyper_params_written = False
        self._failure: Optional[BaseException] = None
        self._failure_reported = False
        self._events_path = ""
        self._guard_event_writer()

    def _guard_event_writer(self) -> None:
        """Keep tensorboardX's writer thread alive when a write fails; remember the error."""
        event_writer = getattr(self._file_writer, "event_writer", None)
        events = getattr(event_writer, "_ev_writer", None)
        if events is None:  # another tensorboardX layout: nothing to guard
            return
        self._events_path = str(getattr(events, "_file_name", self.dir))
        for method in ("write_event", "flush"):
            setattr(events, method, self._guarded(getattr(events, method)))

    def _guarded(self, call: Any) -> Any:
        def guarded(*args: Any) -> Any:
            if self._failure is not None:
                return None  # the file may end in a torn record: append nothing after it
            try:
                return call(*args)
            except Exception as exc:  # noqa: BLE001 - raised in the training thread instead
                self._failure = as_disk_full(exc, self._events_path)
                return None

        return guarded

    def _raise_failure(self) -> None:
        if self._failure is not None and not self._failure_reported:
            self._failure_reported = True
            with contextlib.suppress(Exception):  # warn.txt may be on the same full disk
                self.warn_fn(
                    f"tensorboard: events are no longer written to {self._events_path} "
                    f"({self._failure}); the text formats keep every row"
                )
            raise self._failure

    def _tag(self, key: str) -> str:
        tag = self._tags.get(key)
        if tag is None:
            tag = self._tags[key] = self._clean_tag(key)
        return tag

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self._check_open()
        self._raise_failure()
        Value = self._Summary.Value
        values: List[Any] = []
        for key, value in kvs.items():
            if type(value) in _NUMERIC or isinstance(value, _NUMERIC):
                if key not in AXIS_KEYS:
                    values.append(Value(tag=self._tag(key), simple_value=float(value)))
            elif value is not None and key not in self._skipped:
                self._skipped.add(key)
                self.warn_fn(
                    f"tensorboard: key {key!r} has a non-numeric value "
                    f"({type(value).__name__}); it is skipped for TensorBoard "
                    f"(text formats keep it)"
                )
        if not values:
            return
        if self._file_writer is not None:
            self._file_writer.add_summary(self._Summary(value=values), int(step))
        else:
            for v in values:
                self.writer.add_scalar(v.tag, v.simple_value, int(step))

    def write_hyper_params(self, hyper_params: Mapping[str, Any]) -> None:
        """Record hyper-parameters once: a text table and the HParams plug-in's data."""
        self._check_open()
        if self._hyper_params_written or not hyper_params:
            return
        self._hyper_params_written = True
        self.writer.add_text("hyperparameters", format_hyper_params_markdown(hyper_params), 0)
        flat = {
            k: (v if isinstance(v, (str, bool, int, float)) else str(v))
            for k, v in _flatten(hyper_params).items()
        }
        try:
            from tensorboardX.summary import hparams

            experiment, start_info, _ = hparams(flat, {})
        except Exception as exc:  # noqa: BLE001 - the text table already holds everything
            self.warn_fn(f"tensorboard: hyper-parameters not written to the HParams tab ({exc})")
            return
        file_writer = self.writer._get_file_writer()
        file_writer.add_summary(experiment)
        file_writer.add_summary(start_info)

    def flush(self, timeout: float = 2.0) -> None:
        """Write every queued event to disk (waits up to ``timeout`` s for the writer thread).

        tensorboardX's own ``flush()`` does not wait for the events still queued for its
        background thread; a checkpoint taken right after would then lack its last scalars.
        """
        if self.closed:
            return
        import time

        file_writer = self.writer._get_file_writer()
        event_writer = getattr(file_writer, "event_writer", None)
        queue = getattr(event_writer, "_event_queue", None)
        deadline = time.monotonic() + timeout
        while queue is not None and not queue.empty() and time.monotonic() < deadline:
            time.sleep(0.002)
        self.writer.flush()
        self._raise_failure()

    def _close(self) -> None:
        self.writer.close()
