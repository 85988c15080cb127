"""The ``json`` output format: ``progress.json``, one JSON object per dump and line."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional

from RLA.fs import json_default
from RLA.logger.formats._append import UndoableAppends, repair_torn_tail
from RLA.logger.formats.base import KVWriter, StagedRow, require_dir

PROGRESS_JSON = "progress.json"


class JSONOutputFormat(KVWriter):
    """Append each dumped row as one JSON line to ``<log_dir>/progress.json``.

    numpy/torch values become numbers or lists; NaN and infinities are written as the
    ``NaN``/``Infinity`` tokens Python and pandas read back. A partial last line left by
    a killed process is removed when the file is opened again; a row that hit a full disk
    is cut off before the error is raised.

    Args:
        log_dir: the run's log directory.
        filename: file name inside ``log_dir``.
    """

    name = "json"

    def __init__(self, log_dir: Optional[str], filename: str = PROGRESS_JSON) -> None:
        super().__init__()
        self.path = require_dir(log_dir, self.name) / filename
        repair_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._out = UndoableAppends(self._fd, self.path)

    def stage(self, kvs: Mapping[str, Any], step: int) -> StagedRow:
        self._check_open()
        line = json.dumps(kvs, default=json_default, allow_nan=True) + "\n"
        return self._out.append(line.encode("utf-8"))

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self.stage(kvs, step).commit()

    def _close(self) -> None:
        os.close(self._fd)
