"""The ``csv`` output format: ``progress.csv``, crash-safe at every instant.

The promise (SPEC §4.2): ``pandas.read_csv`` reads the file at every moment, every row whose
dump returned is in it with every key, and a SIGKILL at any instant never loses or corrupts
such a row. How:

* a row is appended with one ``write(2)`` on an ``O_APPEND`` descriptor before ``write``
  returns (flushed to the OS, no fsync: a killed process loses nothing the kernel has);
* the file is created, and widened when a key first appears, by writing the whole new
  file to a temp and ``os.replace``-ing it over the live one, which is never truncated;
* a partial last line (a kill inside ``write(2)``) is dropped when the file is opened
  again, atomically too; the rows before it are untouched;
* a full disk leaves the file as it was: a failed append is cut off again, a created or
  widened file stays a temp that is removed (see :meth:`CSVOutputFormat.stage`).

Cell texts never contain a line break (``\\n`` and ``\\r`` are escaped), so one line is
one row and the torn-tail repair is exact.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from RLA.fs import replace_with_temp, write_temp_beside
from RLA.logger.formats._append import StagedAppend, UndoableAppends, repair_torn_tail
from RLA.logger.formats.base import KVWriter, StagedRow, require_dir

PROGRESS_CSV = "progress.csv"


def _text_cell(value: Any) -> str:
    """A CSV cell for anything that is not a plain number: no line breaks, quoted if needed."""
    text = value if type(value) is str else str(value)
    if "\n" in text or "\r" in text:
        text = text.replace("\r", "\\r").replace("\n", "\\n")
    if "," in text or '"' in text:
        text = '"' + text.replace('"', '""') + '"'
    return text


def _empty_cell(value: None) -> str:
    return ""


#: Cell encoders of the hot path by exact type (``repr`` round-trips floats exactly).
_CELL: Dict[type, Callable[[Any], str]] = {
    float: float.__repr__,
    int: int.__repr__,
    bool: bool.__repr__,
    type(None): _empty_cell,
}


class CSVOutputFormat(KVWriter):
    """Append each dumped row to ``<log_dir>/progress.csv``.

    Columns: the first row's keys sorted; keys appearing later are appended at the end
    (sorted among themselves) and earlier rows are empty there. An existing file (a
    resumed run) is appended to with its own header.

    Args:
        log_dir: the run's log directory.
        filename: file name inside ``log_dir``.
        durable_rewrites: fsync the file when it is created or widened (rare events), so
            that a rename is not reordered before the data on power loss.
    """

    name = "csv"

    def __init__(
        self, log_dir: Optional[str], filename: str = PROGRESS_CSV, durable_rewrites: bool = True
    ) -> None:
        super().__init__()
        self.path = require_dir(log_dir, self.name) / filename
        self.durable_rewrites = durable_rewrites
        self._buf = io.StringIO()
        self._csv = csv.writer(self._buf, lineterminator="\n")
        self._keys: List[str] = []
        self._keyset: frozenset = frozenset()
        self._fd: Optional[int] = None
        self._out: Optional[UndoableAppends] = None
        self._repaired = False
        self._open_existing()

    # -- file state -------------------------------------------------------------------
    def _open_existing(self) -> None:
        try:
            before = os.path.getsize(self.path)
        except OSError:
            before = -1
        data = repair_torn_tail(self.path)
        self._repaired = before >= 0 and len(data) != before
        if not data:
            return  # created atomically (header + first row) at the first write
        header = data[: data.index(b"\n")].decode("utf-8")
        self._set_keys(next(csv.reader([header])))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._out = UndoableAppends(self._fd, self.path)

    def _set_keys(self, keys: List[str]) -> None:
        self._keys = keys
        self._keyset = frozenset(keys)

    def _encode(self, cells: Iterable[Any]) -> bytes:
        buf = self._buf
        buf.seek(0)
        buf.truncate()
        self._csv.writerow(cells)
        return buf.getvalue().encode("utf-8")

    def _row_bytes(self, kvs: Mapping[str, Any], keys: Optional[List[str]] = None) -> bytes:
        cell = _CELL.get
        line = ",".join([cell(type(v), _text_cell)(v) for v in map(kvs.get, keys or self._keys)])
        return (line + "\n").encode("utf-8")

    def _stage_rewrite(self, keys: List[str], content: bytes) -> StagedRow:
        """Write the whole new file to a temp; the commit renames it over the live file."""
        tmp = write_temp_beside(self.path, content, durable=self.durable_rewrites)
        return _StagedRewrite(self, tmp, keys)

    def _install(self, tmp: str, keys: List[str]) -> None:
        replace_with_temp(tmp, self.path, durable=self.durable_rewrites)
        self._set_keys(keys)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._out = UndoableAppends(self._fd, self.path)

    def _widened(self, new_keys: List[str], kvs: Mapping[str, Any]) -> Tuple[List[str], bytes]:
        """The header (old columns + ``new_keys``) and the whole widened file ending in ``kvs``."""
        with open(self.path, "rb") as handle:
            old = handle.read()
        cut = old.index(b"\n") + 1
        body = old[cut:]
        keys = self._keys + new_keys
        if b'"' in body:
            # Quoted cells may hold commas: re-encode row by row, padded to the new width.
            rows = csv.reader(io.StringIO(body.decode("utf-8"), newline=""))
            body = b"".join(self._encode(row + [""] * (len(keys) - len(row))) for row in rows)
        else:
            body = body.replace(b"\n", b"," * len(new_keys) + b"\n")
        return keys, self._encode(keys) + body + self._row_bytes(kvs, keys)

    def _report_repair(self) -> None:
        if self._repaired:
            self._repaired = False
            self.warn_fn(f"{self.path}: dropped a partial last line left by a killed process")

    # -- KVWriter ---------------------------------------------------------------------
    def stage(self, kvs: Mapping[str, Any], step: int) -> StagedRow:
        """Append the row (undoable), or write the created / widened file to a temp.

        Raises:
            DiskFullError: no space for the row; the file is as it was.
        """
        self._check_open()
        if self._fd is None:
            keys = sorted(kvs)
            return self._stage_rewrite(keys, self._encode(keys) + self._row_bytes(kvs, keys))
        new = kvs.keys() - self._keyset
        if new:
            return self._stage_rewrite(*self._widened(sorted(new), kvs))
        assert self._out is not None
        return _StagedCSVAppend(self, self._out.append(self._row_bytes(kvs)))

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        staged = self.stage(kvs, step)
        try:
            staged.commit()
        except BaseException:
            staged.rollback()
            raise

    @property
    def keys(self) -> List[str]:
        """The current header (column order)."""
        return list(self._keys)

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _StagedCSVAppend(StagedRow):
    """A staged append; the commit reports a torn tail repaired at open (once)."""

    def __init__(self, writer: CSVOutputFormat, append: StagedAppend) -> None:
        self.writer = writer
        self.append = append

    def commit(self) -> None:
        self.writer._report_repair()

    def rollback(self) -> None:
        self.append.rollback()


class _StagedRewrite(StagedRow):
    """A created or widened ``progress.csv`` waiting in a temp file for its rename."""

    def __init__(self, writer: CSVOutputFormat, tmp: str, keys: List[str]) -> None:
        self.writer = writer
        self.tmp: Optional[str] = tmp
        self.keys = keys

    def commit(self) -> None:
        tmp, self.tmp = self.tmp, None
        if tmp is not None:
            try:
                self.writer._install(tmp, self.keys)
            except BaseException:
                self.tmp = tmp  # not renamed: the rollback removes it
                raise
            self.writer._report_repair()

    def rollback(self) -> None:
        """Remove the temp; a renamed file cannot be taken back (its commit was the last step)."""
        tmp, self.tmp = self.tmp, None
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
