"""The ``tensorboard`` output format: scalars and hyper-parameters as TensorBoard events (tb/)."""

from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Mapping, Optional

from RLA.errors import BackendNotInstalledError
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
    which TensorBoard reads exactly like separate ``add_scalar`` calls. Tags are cleaned
    as ``SummaryWriter.add_scalar`` cleans them (``tensorboardX.summary.scalar``). Non-numeric
    values (strings, arrays) are skipped with one warning per key. ``time-step`` and
    ``timestamp`` are not written: they are every event's step and wall time.

    Events are written by tensorboardX's background thread, after the text formats hold
    the row, into a file opened through :mod:`RLA.logger.formats.tb_sink`. If a write fails
    (a full disk), the error is raised once by the next dump or flush (a
    :class:`RLA.errors.DiskFullError` naming the event file) and later events are dropped;
    without this tensorboardX's thread died and, ten events later, the training blocked
    forever on its full queue. Only tensorboardX's public API is used: ``SummaryWriter``,
    its ``file_writer`` (``FileWriter.add_summary`` / ``add_event``), ``summary.scalar`` /
    ``summary.hparams`` and ``record_writer.register_writer_factory``.

    The ``SummaryWriter`` (:attr:`writer`, ``logger.get_tbx_writer()``) writes into the same
    file; its ``logdir`` is spelled ``rla-events:<dir>`` (the route to that file), so
    ``add_embedding``, which writes its files with ``os.makedirs(logdir/...)``, needs a
    ``SummaryWriter`` of its own (e.g. on ``<dir>/embeddings``).

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
            from tensorboardX.summary import scalar

            from RLA.logger.formats.tb_sink import routed, sink_factory

            factory = sink_factory()
        except ImportError as exc:
            raise BackendNotInstalledError(
                "The 'tensorboard' output format needs tensorboardX 2.x",
                expected="tensorboardX importable, with record_writer.register_writer_factory",
                found=str(exc),
                fix="pip install 'tensorboardX>=2.1', or remove 'tensorboard' from LOG_USED",
            ) from exc
        self._Summary = Summary
        self._scalar = scalar
        self.dir = require_dir(log_dir, self.name) / subdir
        with factory.collect() as opened:
            self.writer = SummaryWriter(logdir=routed(str(self.dir)), flush_secs=flush_secs)
        self._file_writer = self.writer.file_writer
        self._sink = opened[0]
        self._tags: Dict[str, str] = {}
        self._skipped: set = set()
        self._hyper_params_written = False
        self._failure_reported = False

    @property
    def events_path(self) -> str:
        """The event file this format writes."""
        return self._sink.path

    def _raise_failure(self) -> None:
        failure = self._sink.failure
        if failure is not None and not self._failure_reported:
            self._failure_reported = True
            with contextlib.suppress(Exception):  # warn.txt may be on the same full disk
                self.warn_fn(
                    f"tensorboard: events are no longer written to {self.events_path} "
                    f"({failure}); the text formats keep every row"
                )
            raise failure

    def _tag(self, key: str) -> str:
        tag = self._tags.get(key)
        if tag is None:  # the tag add_scalar would write (tensorboardX cleans odd characters)
            tag = self._tags[key] = self._scalar(key, 0.0).value[0].tag
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
        if values:
            self._file_writer.add_summary(self._Summary(value=values), int(step))

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
        self._file_writer.add_summary(experiment)
        self._file_writer.add_summary(start_info)

    def flush(self, timeout: float = 2.0) -> None:
        """Write every queued event to disk (waits up to ``timeout`` s for the writer thread).

        tensorboardX's own ``flush()`` does not wait for the events still queued for its
        background thread; a checkpoint taken right after would then lack its last scalars.
        A barrier event is queued behind them and this waits until the sink receives it.
        """
        if self.closed:
            return
        from tensorboardX.proto.event_pb2 import Event

        marker, arrived = self._sink.barrier()
        self._file_writer.add_event(Event(file_version=marker))
        arrived.wait(timeout)
        self.writer.flush()
        self._raise_failure()

    def _close(self) -> None:
        self.writer.close()
        self._sink.close()
