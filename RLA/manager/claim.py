"""Create a run's directory exclusively: two runs never share an index or a directory."""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, Set, Tuple

from RLA.errors import RunExistsError
from RLA.layout import LOG, RunLayout
from RLA.naming import DATE_FORMAT, format_run_name, parse_run_name
from RLA.text import count

_LOCK_NAME = ".rla-claim.lock"
_MAX_TRIES = 1_000_000

#: Where a new run's start time comes from (``datetime.now`` unless a test injects one).
Clock = Callable[[], _dt.datetime]


def claim_run(
    data_root: Path,
    task: str,
    when: Optional[_dt.datetime],
    ip: str,
    tracked: Sequence[Tuple[str, Any]],
    clock: Clock = _dt.datetime.now,
) -> Tuple[RunLayout, _dt.datetime]:
    """Create ``<data_root>/log/<task>/<date>/<name>`` for a new run.

    The index (date + time to the microsecond) must be unique in the task, so under a
    per-day lock the start time is moved forward by one microsecond while another run of
    the day already uses it; the log directory is then created with ``mkdir`` (exclusive).
    The names of runs that start together differ anyway (their tracked values do), so the
    lock and the scan of the day's runs are what keep their indexes apart.

    Args:
        data_root: the database root.
        task: the task (table) name.
        when: the start time; ``None`` asks ``clock``.
        ip: the host's address (part of the name).
        tracked: the tracked ``(key, value)`` pairs (part of the name).
        clock: the start time's source when ``when`` is ``None`` (tests make processes
            ask for the same instant).

    Returns:
        The new run's layout and the (possibly adjusted) start time.
    """
    when = clock() if when is None else when
    while True:  # once more in the next day's folder when the bumps cross midnight
        day_dir = Path(data_root) / LOG / task / when.strftime(DATE_FORMAT)
        day_dir.mkdir(parents=True, exist_ok=True)
        with _day_lock(day_dir):
            name, when = _claim_in_day(day_dir, when, ip, tracked)
        if name is not None:
            return RunLayout(Path(data_root), task, when.strftime(DATE_FORMAT), name), when


@contextlib.contextmanager
def _day_lock(day_dir: Path) -> Iterator[None]:
    """Hold the day's claim lock (exclusive, between processes) for the ``with`` block."""
    lock_fd = os.open(day_dir / _LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        os.close(lock_fd)


def _used_times(day_dir: Path) -> Set[str]:
    """The ``HH-MM-SS-ffffff`` of every run of the day."""
    used = set()
    for entry in os.listdir(day_dir):
        parsed = parse_run_name(entry)
        if parsed is not None:
            used.add(parsed.time)
    return used


def _claim_in_day(
    day_dir: Path, when: _dt.datetime, ip: str, tracked: Sequence[Tuple[str, Any]]
) -> Tuple[Optional[str], _dt.datetime]:
    """Create the run's directory in ``day_dir`` at the first free instant from ``when`` on.

    Returns:
        ``(name, start time)``, or ``(None, the first instant of the next day)`` when the
        day has no free instant left after ``when``.

    Raises:
        RunExistsError: no free index in a million tries (a broken clock).
    """
    day, used = when.strftime(DATE_FORMAT), _used_times(day_dir)
    for _ in range(_MAX_TRIES):
        if when.strftime(DATE_FORMAT) != day:
            return None, when
        stamp = when.strftime("%H-%M-%S-%f")
        if stamp not in used:
            name = format_run_name(when, ip, tracked)
            try:
                os.mkdir(day_dir / name)  # exclusive: a directory another process made is never shared
            except FileExistsError:
                used.add(stamp)
                continue
            return name, when
        when = when + _dt.timedelta(microseconds=1)
    raise RunExistsError(
        f"Could not find a free run index in {day_dir}",
        expected="a free microsecond",
        found=f"{count(len(used), 'run')} that day",
        fix="retry; this only happens with a broken clock",
    )
