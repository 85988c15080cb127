"""The ``Logger`` object: accumulates one row of key/values and fans it out to output formats.

No module-level state lives here: every piece of state (the current row, moving-average
windows, ``freq`` bookkeeping, open files) belongs to a ``Logger`` instance;
:mod:`RLA.logger.api` holds the one current instance.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from RLA.errors import LoggerError
from RLA.logger.formats import make_output_format
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.staging import row_for, stage_all, write_later
from RLA.logger.text_files import BACKUP_TXT, WARN_TXT, TextFiles
from RLA.logger.time_step import TimeStepHolder, time_step_holder
from RLA.logger.values import as_number, check_key, check_total_steps, check_window, normalize_value

DEBUG = 10
INFO = 20
WARN = 30
ERROR = 40
DISABLED = 50
BACKUP = 60

TIME_STEP_KEY = "time-step"
TIMESTAMP_KEY = "timestamp"

Exclude = Union[None, str, Iterable[str]]
FormatSpec = Union[str, KVWriter]


class Logger:
    """Record scalars row by row and write each dumped row to every output format.

    Args:
        dir: the log directory (``warn.txt`` and ``backup.txt`` are created in it);
            ``None`` means no files (only formats that need no directory work).
        format_strs: output format names (see ``RLA.logger.formats.output_formats``) or
            ready ``KVWriter`` objects.
        hyper_params: recorded once by formats that keep them (TensorBoard).
        on_dump: called after each non-empty dump with a copy of the row.
        redact: applied to every text line and every text value of a row before it is
            written (the run's :meth:`RLA.redaction.RedactionPolicy.redact_text`).
        level: minimum level of text messages.
        time_step: the time-step holder giving each row its ``time-step``.
    """

    def __init__(
        self,
        dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        format_strs: Sequence[FormatSpec] = ("stdout",),
        hyper_params: Optional[Mapping[str, Any]] = None,
        on_dump: Optional[Callable[[Dict[str, Any]], Any]] = None,
        redact: Optional[Callable[[str], str]] = None,
        level: int = INFO,
        time_step: Optional[TimeStepHolder] = None,
    ) -> None:
        self.dir: Optional[str] = os.fspath(dir) if dir is not None else None
        self.level = level
        self.on_dump = on_dump
        self.redact = redact
        self.time_step = time_step if time_step is not None else time_step_holder
        self.closed = False
        self.writers: List[KVWriter] = []
        self._text: Optional[TextFiles] = None
        self._row: Dict[str, Any] = {}
        self._cnt: Dict[str, int] = {}
        self._excluded: Dict[str, Tuple[str, ...]] = {}
        self._last_record: Dict[str, int] = {}
        self._ma: Dict[str, Deque[float]] = {}
        self.total_steps: Optional[int] = None
        try:
            if self.dir is not None:
                os.makedirs(self.dir, exist_ok=True)
                self._text = TextFiles(self.dir)
            for spec in format_strs:
                self._add_writer(spec)
        except BaseException:
            self.close()
            raise
        self._seq_writers = [w for w in self.writers if isinstance(w, SeqWriter)]
        if self.dir is not None:
            self.log(f"Logging to {self.dir}")
        if hyper_params:
            self.record_hyper_params(hyper_params)

    def _add_writer(self, spec: FormatSpec) -> None:
        if isinstance(spec, KVWriter):
            writer = spec
            writer.name = writer.name or type(writer).__name__
        elif isinstance(spec, str):
            if spec in self.format_names:
                return
            writer = make_output_format(spec, self.dir)
        else:
            raise LoggerError(
                "An output format must be a name or a KVWriter",
                expected="e.g. 'csv', 'tensorboard' or a KVWriter instance",
                found=repr(spec),
                fix="fix format_strs / LOG_USED",
            )
        writer.warn_fn = self._writer_warning
        self.writers.append(writer)

    @property
    def format_names(self) -> List[str]:
        """Names of the configured output formats, in order."""
        return [w.name for w in self.writers]

    # -- recording --------------------------------------------------------------------
    def logkv(self, key: str, val: Any, exclude: Exclude = None, freq: Optional[int] = None) -> None:
        """Record ``val`` for ``key`` in the current row (last write wins).

        Args:
            key: column name.
            val: a number, string or anything with a ``str()``; numpy/torch scalars are
                stored as python numbers.
            exclude: format name(s) that must not receive this key (exact names).
            freq: record only if the time-step advanced by at least ``freq`` since this
                key was last recorded.
        """
        if freq is not None:
            now = self.time_step.get_time()
            last = self._last_record.get(key)
            if last is not None and 0 <= now - last < freq:  # time going back (resume) records
                return
            self._last_record[key] = now
        if type(key) is not str or "\n" in key or "\r" in key:
            check_key(key)
        t = type(val)
        self._row[key] = val if (t is float or t is int or t is str) else normalize_value(val)
        if exclude is not None:
            self._excluded[key] = (exclude,) if isinstance(exclude, str) else tuple(exclude)

    record_tabular = logkv

    def logkv_mean(self, key: str, val: Any) -> None:
        """Record the mean of every value given for ``key`` since the last dump."""
        number = as_number(val, key, "logkv_mean")
        old = float(self._row.get(key, 0.0)) if key in self._cnt else 0.0
        cnt = self._cnt.get(key, 0)
        mean = old * cnt / (cnt + 1) + number / (cnt + 1)
        check_key(key)
        self._row[key] = mean
        self._cnt[key] = cnt + 1

    def logkvs(self, d: Mapping[str, Any], prefix: str = "", exclude: Exclude = None) -> None:
        """Record every item of ``d``, keys prefixed with ``prefix``."""
        for key, val in d.items():
            self.logkv(prefix + key, val, exclude)

    def log_key_value(self, keys: Sequence[str], values: Sequence[Any], prefix_name: str = "") -> None:
        """Record ``values[i]`` under ``prefix_name + keys[i]``."""
        if len(keys) != len(values):
            raise LoggerError(
                "log_key_value needs as many values as keys",
                expected=f"{len(keys)} values",
                found=f"{len(values)} values",
                fix="pass matching sequences",
            )
        for key, val in zip(keys, values):
            self.logkv(prefix_name + key, val)

    def ma_record_tabular(
        self,
        key: str,
        val: Any,
        window: int,
        exclude: Exclude = None,
        freq: Optional[int] = None,
        ignore_nan: bool = False,
    ) -> None:
        """Record the moving average of the last ``window`` values, once the window is full.

        Args:
            key: column name.
            val: a number.
            window: number of values averaged (the window restarts if it changes).
            exclude: as in :meth:`logkv`.
            freq: as in :meth:`logkv` (applies to emitting the mean, not to collecting).
            ignore_nan: leave NaN values out of the window instead of averaging them in.
        """
        window = check_window(window, key)
        val = as_number(val, key, "ma_record_tabular")
        dq = self._ma.get(key)
        if dq is None or dq.maxlen != window:
            dq = self._ma[key] = deque(maxlen=window)
        if not (ignore_nan and val != val):
            dq.append(val)
        if len(dq) == window:
            self.logkv(key, sum(dq) / window, exclude, freq)

    def getkvs(self) -> Dict[str, Any]:
        """A copy of the current (not yet dumped) row."""
        return dict(self._row)

    def dumpkvs(self) -> Dict[str, Any]:
        """Write the current row to every format, then start a new row.

        ``time-step`` (from the time-step holder) and ``timestamp`` (``time.time()``) are
        added unless the row already has them. An empty row writes nothing.

        The row reaches every file format (csv, json, log) or none: each format stages it,
        and if one fails (a full disk: :class:`RLA.errors.DiskFullError`) the others take
        it back, the error is raised and the row stays pending, so the next ``dumpkvs()``
        writes it once. Formats that cannot take a row back (TensorBoard, stdout, most
        custom formats) get it only after the file formats committed.

        Returns:
            The row written (``{}`` for an empty dump).
        """
        self._check_open()
        row, excluded, counts = self._row, self._excluded, self._cnt
        self._row, self._excluded, self._cnt = {}, {}, {}
        if not row:
            return {}
        pending = dict(row)  # what the user recorded, without the keys added below
        step = row.setdefault(TIME_STEP_KEY, self.time_step.get_time())
        row.setdefault(TIMESTAMP_KEY, time.time())
        if self.redact is not None:  # names too: a column may be f"loss/{token}"
            row, excluded = self._redacted(row), {self._redact_key(k): v for k, v in excluded.items()}
        if type(step) is not int:
            step = self.time_step.get_time()
        rows = [(writer, row_for(writer, row, excluded)) for writer in self.writers]
        try:
            later = stage_all(rows, step)
        except BaseException:
            self._keep_pending(pending, excluded, counts)
            raise
        write_later(later, step)
        if self.on_dump is not None:
            self.on_dump(dict(row))
        return row

    def _redact_key(self, key: Any) -> Any:
        assert self.redact is not None
        return self.redact(key) if type(key) is str else key

    def _redacted(self, row: Dict[str, Any]) -> Dict[str, Any]:
        """``row`` with secrets hidden in its text values and in its column names."""
        assert self.redact is not None
        return {
            self._redact_key(key): self.redact(value) if type(value) is str else value
            for key, value in row.items()
        }

    def _keep_pending(
        self, pending: Dict[str, Any], excluded: Dict[str, Tuple[str, ...]], counts: Dict[str, int]
    ) -> None:
        """Put a row that was not written back, under what was recorded since (last write wins)."""
        pending.update(self._row)
        self._row = pending
        self._excluded = {**excluded, **self._excluded}
        self._cnt = {**counts, **self._cnt}

    dump_tabular = dumpkvs

    def set_total_steps(self, total: Optional[int]) -> None:
        """Tell the formats the time-step the run is expected to reach (``None``: unknown).

        The ``stdout`` format shows the progress and an ETA with it; the value is kept for
        formats added later. ``exp_manager.set_total_steps`` calls this for every run.

        Raises:
            LoggerError: ``total`` is not a positive int (or ``None``).
        """
        total = check_total_steps(total)
        self.total_steps = total
        for writer in self.writers:
            writer.set_total_steps(total)

    def record_hyper_params(self, hyper_params: Mapping[str, Any]) -> None:
        """Hand the run's hyper-parameters to every format that records them."""
        for writer in self.writers:
            writer.write_hyper_params(hyper_params)

    # -- text -------------------------------------------------------------------------
    def log(self, *args: Any, level: int = INFO) -> None:
        """Write a text line to the text formats if ``level`` passes :meth:`set_level`.

        WARN and ERROR lines also go to ``warn.txt``; BACKUP lines to ``backup.txt``.
        """
        if self.level > level:
            return
        self._check_open()
        line = " ".join(map(str, args))
        if self.redact is not None:
            line = self.redact(line)
        for writer in self._seq_writers:
            writer.write_sequence([line])
        if self._text is not None and level >= WARN:
            self._text.append(BACKUP_TXT if level >= BACKUP else WARN_TXT, line)

    def debug(self, *args: Any) -> None:
        self.log(*args, level=DEBUG)

    def info(self, *args: Any) -> None:
        self.log(*args, level=INFO)

    def warn(self, *args: Any) -> None:
        """Log at WARN with the ``[WARN] <time-step> : `` prefix (also to ``warn.txt``)."""
        self.log(f"[WARN] {self.time_step.get_time()} :", *args, level=WARN)

    def error(self, *args: Any) -> None:
        """Log at ERROR with the ``[ERROR] <time-step> : `` prefix (also to ``warn.txt``)."""
        self.log(f"[ERROR] {self.time_step.get_time()} :", *args, level=ERROR)

    def backup(self, *args: Any) -> None:
        """Log at BACKUP with the ``[BACKUP] <time-step> : `` prefix (also to ``backup.txt``)."""
        self.log(f"[BACKUP] {self.time_step.get_time()} :", *args, level=BACKUP)

    def _writer_warning(self, message: str) -> None:
        if not self.closed:
            self.warn(message)

    def set_level(self, level: int) -> None:
        """Show text messages at ``level`` and above."""
        self.level = level

    # -- access -----------------------------------------------------------------------
    def get_dir(self) -> Optional[str]:
        """The log directory, or ``None`` if this logger writes no files."""
        return self.dir

    def get_tbx_writer(self) -> Any:
        """The ``tensorboardX.SummaryWriter`` of the ``tensorboard`` format."""
        from RLA.logger.formats.tensorboard import TensorBoardOutputFormat

        for writer in self.writers:
            if isinstance(writer, TensorBoardOutputFormat):
                return writer.writer
        raise LoggerError(
            "No TensorBoard writer: the 'tensorboard' output format is not configured",
            expected="'tensorboard' in format_strs / LOG_USED",
            found=f"formats {self.format_names}",
            fix="add 'tensorboard' to LOG_USED in rla_config.yaml (or to logger.configure(format_strs=...))",
        )

    def timestep(self) -> int:
        """The current time-step."""
        return self.time_step.get_time()

    # -- lifecycle --------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise LoggerError(
                "The logger is closed",
                expected="an open logger",
                found=f"closed logger for {self.dir}",
                fix="call logger.configure(...) again before logging",
            )

    def flush(self) -> None:
        """Push every format's buffered data to the operating system."""
        for writer in self.writers:
            writer.flush()

    def close(self) -> None:
        """Close every format and file. Idempotent."""
        if self.closed:
            return
        self.closed = True
        first_error: Optional[BaseException] = None
        for writer in self.writers:
            try:
                writer.close()
            except Exception as exc:  # noqa: BLE001 - close the others first
                first_error = first_error or exc
        if self._text is not None:
            self._text.close()
        if first_error is not None:
            raise first_error

    def __enter__(self) -> "Logger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"Logger(dir={self.dir!r}, formats={self.format_names}, {state})"
