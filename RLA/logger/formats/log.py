"""The ``log`` output format: ``log.txt``, the human-readable record of a run."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence

from RLA.logger.formats._append import UndoableAppends
from RLA.logger.formats.base import KVWriter, SeqWriter, StagedRow, require_dir
from RLA.logger.formats.human import TableRenderer

LOG_TXT = "log.txt"


class LogTxtOutputFormat(KVWriter, SeqWriter):
    """Append dump tables and text lines to ``<log_dir>/log.txt``.

    Every write is handed to the operating system before returning (no fsync), so a
    killed process loses nothing that was logged; a write that hits a full disk is cut
    off again before the :class:`RLA.errors.DiskFullError` leaves.

    Args:
        log_dir: the run's log directory.
        filename: file name inside ``log_dir``.
    """

    name = "log"

    def __init__(self, log_dir: Optional[str], filename: str = LOG_TXT) -> None:
        super().__init__()
        self._render = TableRenderer()
        self.path = require_dir(log_dir, self.name) / filename
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._out = UndoableAppends(self._fd, self.path)

    def _write_text(self, text: str) -> StagedRow:
        return self._out.append(text.encode("utf-8", "backslashreplace"))

    def stage(self, kvs: Mapping[str, Any], step: int) -> StagedRow:
        self._check_open()
        text = self._render(kvs)
        return self._write_text(text) if text else StagedRow()

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self.stage(kvs, step).commit()

    def write_sequence(self, lines: Sequence[str]) -> None:
        self._check_open()
        self._write_text("".join(line + "\n" for line in lines))

    def _close(self) -> None:
        os.close(self._fd)
