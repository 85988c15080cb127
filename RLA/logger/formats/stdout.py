"""The ``stdout`` output format: at most one dump table per interval, a progress line, text lines."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from RLA.errors import LoggerError
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.logger.formats.human import TableRenderer
from RLA.logger.formats.progress import Progress

#: Seconds between two printed tables by default (``STDOUT_INTERVAL`` of rla_config.yaml).
DEFAULT_INTERVAL = 5.0
#: Columns every row has that say nothing on a terminal (``timestamp`` is wall-clock seconds).
HIDDEN_KEYS = frozenset({"timestamp"})
#: How often (seconds) the in-place progress line of a terminal is redrawn at most.
_REDRAW = 0.1
_CLEAR = "\r\x1b[K"


def _stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class StdoutOutputFormat(KVWriter, SeqWriter):
    """Print a dump as a table at most once per ``interval`` seconds, and every text line.

    Between two tables a terminal shows one progress line, redrawn in place (step, rate,
    ETA when the total is known, see :meth:`set_total_steps`); in a file or a pipe the
    progress line is printed under each table instead. When the writer closes, the last
    row is printed as a table if it was not yet. The ``timestamp`` column is not printed
    (``log.txt`` keeps it). ``interval=0`` prints every dump as a table, as the original did.
    ``sys.stdout`` is looked up at each write, so redirection (and pytest's ``capsys``) work.

    Args:
        log_dir: unused (accepted so every format has the same factory signature).
        interval: seconds between two printed tables (``STDOUT_INTERVAL``); 0 = every dump.
        clock: monotonic seconds (tests inject a fake one).
    """

    name = "stdout"

    def __init__(
        self,
        log_dir: Optional[str] = None,
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._render = TableRenderer()
        self._clock = clock
        self.interval = interval
        self.progress = Progress()
        self._last_table: Optional[float] = None
        self._last_redraw: Optional[float] = None
        self._unprinted: Optional[Dict[str, Any]] = None
        self._line_shown = False  # a progress line is on the terminal, without a newline

    @property
    def interval(self) -> float:
        """Seconds between two printed tables (0 = every dump)."""
        return self._interval

    @interval.setter
    def interval(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            raise LoggerError(
                "The stdout interval must be a number of seconds >= 0",
                expected="e.g. 5 (0 = every dump)",
                found=repr(seconds),
                fix="set STDOUT_INTERVAL to 0 or a positive number",
            )
        self._interval = float(seconds)

    def set_total_steps(self, total: Optional[int]) -> None:
        self.progress.total = total

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self._check_open()
        now = self._clock()
        self.progress.add(step, now)
        if self._last_table is None or now - self._last_table >= self._interval:
            self._print_table(kvs, now)
            return
        self._unprinted = dict(kvs)
        if _stdout_is_terminal() and (self._last_redraw is None or now - self._last_redraw >= _REDRAW):
            sys.stdout.write(_CLEAR + self.progress.line(now))
            sys.stdout.flush()
            self._line_shown, self._last_redraw = True, now

    def _print_table(self, kvs: Mapping[str, Any], now: float) -> None:
        text = self._render({k: v for k, v in kvs.items() if k not in HIDDEN_KEYS})
        if self._interval > 0:
            text += self.progress.line(now) + "\n"
        sys.stdout.write(self._clear_line() + text)
        sys.stdout.flush()
        self._last_table, self._unprinted = now, None

    def _clear_line(self) -> str:
        shown, self._line_shown = self._line_shown, False
        return _CLEAR if shown else ""

    def write_sequence(self, lines: Sequence[str]) -> None:
        self._check_open()
        sys.stdout.write(self._clear_line() + "".join(line + "\n" for line in lines))
        sys.stdout.flush()

    def flush(self) -> None:
        sys.stdout.flush()

    def _close(self) -> None:
        """Print the last row if it was not shown (the final values of a run)."""
        if sys.stdout is None:  # interpreter shutdown
            return
        if self._unprinted is not None:
            self._print_table(self._unprinted, self._clock())
        elif self._line_shown:
            sys.stdout.write(self._clear_line())
        sys.stdout.flush()

    def __del__(self) -> None:
        # A writer that was never closed prints nothing when it is collected: at that moment
        # the table would land in whatever output is current (another run's, a test's).
        self.closed = True
