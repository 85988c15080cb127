"""Check a ``run.json`` read from disk against what its writer produces (types and ranges).

The writer (:mod:`RLA.manager.run_info`, :mod:`RLA.manager.experiment`) stores times as
ISO-8601 strings, the pid and exit code as integers, the heartbeat interval as a number of
seconds. A file that arrived by a pull may hold anything, and the readers (status from the
heartbeat, ``os.kill(pid, 0)``, time columns, ``--since``) must never see a value of the
wrong type. Policy, the same for every field: a field of the wrong type or out of range
makes the run *damaged* (skipped from listings and reported with the field and what was
found) and is dropped from the info, so ``--include-broken``, ``rla view`` and the status
of the rest still work without it. A missing field is not a problem (older runs).
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Callable, Dict, List, Optional, Tuple

#: The largest pid (Linux caps pid_max at 2**22; other systems stay below 2**31).
MAX_PID = 2**31 - 1
#: The largest heartbeat interval accepted (seconds; a year).
MAX_INTERVAL_S = 365 * 24 * 3600.0
_STATUSES = ("running", "finished", "crashed", "killed")

Check = Callable[[Any], Optional[str]]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _iso_time(value: Any) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        return f"expected an ISO-8601 time string, found {type(value).__name__} {_short(value)}"
    if len(value) > 64:
        return f"expected an ISO-8601 time string, found {len(value)} characters"
    try:
        when = _dt.datetime.fromisoformat(value)
        when.astimezone()  # out-of-range offsets/dates fail here, not later in a reader
    except (ValueError, OverflowError, OSError):
        return f"expected an ISO-8601 time string, found {_short(value)}"
    return None


def _integer(low: int, high: int, optional: bool) -> Check:
    def check(value: Any) -> Optional[str]:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer, found {type(value).__name__} {_short(value)}"
        if not low <= value <= high:
            return f"expected an integer in [{low}, {high}], found {_short(value)}"
        return None

    return check


def _interval(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected a number of seconds, found {type(value).__name__} {_short(value)}"
    if not (math.isfinite(value) and 0 < value <= MAX_INTERVAL_S):
        return f"expected a number of seconds in (0, {MAX_INTERVAL_S:g}], found {_short(value)}"
    return None


def _status(value: Any) -> Optional[str]:
    if value is None or (isinstance(value, str) and value in _STATUSES):
        return None
    return f"expected one of {', '.join(_STATUSES)}, found {_short(value)}"


def _typed(*types: type) -> Check:
    names = " or ".join("null" if t is type(None) else t.__name__ for t in types)

    def check(value: Any) -> Optional[str]:
        if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
            return None
        return f"expected {names}, found {type(value).__name__} {_short(value)}"

    return check


def _string_list(value: Any) -> Optional[str]:
    if value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return None
    return f"expected a list of strings, found {_short(value)}"


_NONE = type(None)
#: The checked fields of ``run.json`` (others are shown as they are, never interpreted).
CHECKS: Dict[str, Check] = {
    "status": _status,
    "start_time": _iso_time,
    "end_time": _iso_time,
    "heartbeat": _iso_time,
    "heartbeat_interval": _interval,
    "pid": _integer(1, MAX_PID, optional=True),
    "exit_code": _integer(-(2**31), 2**31 - 1, optional=True),
    "format_version": _integer(0, 10**6, optional=True),
    "index": _typed(str, _NONE),
    "task": _typed(str, _NONE),
    "name": _typed(str, _NONE),
    "host": _typed(str, _NONE),
    "ip": _typed(str, _NONE),
    "parent": _typed(str, _NONE),
    "error": _typed(str, _NONE),
    "command": _typed(list, str, _NONE),
    "hyper_params": _typed(dict, _NONE),
    "tracked_keys": _string_list,
    "git": _typed(dict, _NONE),
}


def check_info(info: Dict[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """Validate a ``run.json`` object.

    Returns:
        ``(clean, problems)``: ``clean`` is ``info`` without the fields that failed (the same
        object when all pass), ``problems`` one ``"run.json field 'pid': expected ..."``
        line per failed field.
    """
    problems: List[str] = []
    bad: List[str] = []
    for key, check in CHECKS.items():
        if key in info:
            reason = check(info[key])
            if reason is not None:
                problems.append(f"run.json field {key!r}: {reason}")
                bad.append(key)
    if not bad:
        return info, problems
    return {k: v for k, v in info.items() if k not in bad}, problems
