"""The ``stdout`` output format: the dump table and text lines on standard output."""
from __future__ import annotations

import sys
from typing import Any, Mapping, Optional, Sequence

from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.formats.human import TableRenderer


class StdoutOutputFormat(KVWriter, SeqWriter):
    """Print every dump as a table, and every text line, to ``sys.stdout``.

    ``sys.stdout`` is looked up at each write, so redirection (and pytest's ``capsys``)
    work after configuration.

    Args:
        log_dir: unused (accepted so every format has the same factory signature).
    """

    name = "stdout"

    def __init__(self, log_dir: Optional[str] = None) -> None:
        super().__init__()
        self._render = TableRenderer()

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self._check_open()
        text = self._render(kvs)
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    def write_sequence(self, lines: Sequence[str]) -> None:
        self._check_open()
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()

    def flush(self) -> None:
        sys.stdout.flush()
