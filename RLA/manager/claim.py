"""Create a run's directory exclusively: two runs never share an index or a directory."""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Tuple

from RLA.errors import RunExistsError
from RLA.layout import LOG, RunLayout
from RLA.naming import DATE_FORMAT, format_run_name, parse_run_name

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
    if when is None:
        when = clock()
    day_dir = Path(data_root) / LOG / task / when.strftime(DATE_FORMAT)
    day_dir.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(day_dir / _LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        used = set()
        for entry in os.listdir(day_dir):
            parsed = parse_run_name(entry)
            if parsed is not None:
                used.add(parsed.time)
        for _ in range(_MAX_TRIES):
            if (
                when.strftime("%H-%M-%S-%f") not in used
                and when.strftime(DATE_FORMAT) == day_dir.relative_to(day_dir.parents[2]).as_posix()
            ):
                name = format_run_name(when, ip, tracked)
                try:
                    os.mkdir(day_dir / name)
                except FileExistsError:
                    used.add(when.strftime("%H-%M-%S-%f"))
                    continue
                return RunLayout(Path(data_root), task, when.strftime(DATE_FORMAT), name), when
            when = when + _dt.timedelta(microseconds=1)
            if when.strftime(DATE_FORMAT) != day_dir.relative_to(day_dir.parents[2]).as_posix():
                # Crossed midnight while bumping: claim in the next day's directory instead.
                os.close(lock_fd)
                lock_fd = -1
                return claim_run(data_root, task, when, ip, tracked, clock)
        raise RunExistsError(
            f"Could not find a free run index in {day_dir}",
            expected="a free microsecond",
            found=f"{len(used)} runs that day",
            fix="retry; this only happens with a broken clock",
        )
    finally:
        if lock_fd >= 0:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)
