"""``run.json``: the metadata record of a run (read, write atomically, derive its status).

Keys (format_version 1)::

    format_version, index, task, name, date, record_date, hyper_params, tracked_keys,
    host, ip, pid, command, cwd, python, packages, git{commit, branch, dirty, repo},
    start_time, end_time, status, exit_code, error, heartbeat, heartbeat_interval,
    parent, data_root, rla_version

Times are ISO-8601 strings with the local UTC offset; ``heartbeat`` is the same.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
from pathlib import Path
from typing import Any, Dict, Optional

from RLA.config.remote import PASSWORD_ENV
from RLA.errors import RunNotFoundError
from RLA.fs import atomic_write_json, read_json
from RLA.redaction import RedactionPolicy

FORMAT_VERSION = 1
RUNNING, FINISHED, CRASHED, KILLED = "running", "finished", "crashed", "killed"
STATUSES = (RUNNING, FINISHED, CRASHED, KILLED)
#: A running run whose heartbeat is older than this many intervals is reported as crashed.
STALE_INTERVALS = 3.0
DEFAULT_HEARTBEAT_INTERVAL = 30.0


def now_iso() -> str:
    """The current local time as ISO-8601 with offset and microseconds."""
    return _dt.datetime.now().astimezone().isoformat(timespec="microseconds")


def parse_time(text: Optional[str]) -> Optional[_dt.datetime]:
    """Parse an ISO time written by :func:`now_iso` (``None`` passes through)."""
    if not text:
        return None
    try:
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def read_run_info(path: os.PathLike) -> Dict[str, Any]:
    """Read a ``run.json``.

    Raises:
        RunNotFoundError: the file does not exist.
        ValueError: the file is not valid JSON (callers report and skip the run).
    """
    path = Path(path)
    if not path.exists():
        raise RunNotFoundError(
            "The run has no run.json",
            expected=str(path),
            found="no such file",
            fix="check the index or data root",
        )
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def redacted_run_info(info: Dict[str, Any], policy: Optional[RedactionPolicy] = None) -> Dict[str, Any]:
    """``info`` as it may be stored: secrets of ``hyper_params`` (by key and value), of
    ``command`` (secret options) and known secret values anywhere else hidden.

    Args:
        info: the record (not changed).
        policy: the run's policy (default: the default key patterns and ``RLA_REMOTE_PASSWORD``).
    """
    if policy is None:
        policy = RedactionPolicy(values=[os.environ.get(PASSWORD_ENV)])
    out = {}
    for key, value in info.items():
        if key in ("hyper_params", "bookkeeping"):
            out[key] = policy.redact_mapping(value)
        elif key == "command" and isinstance(value, list):
            out[key] = policy.redact_argv([str(arg) for arg in value])
        else:
            out[key] = policy.redact_mapping(value, by_key=False)
    return out


def write_run_info(path: os.PathLike, info: Dict[str, Any], policy: Optional[RedactionPolicy] = None) -> None:
    """Write ``run.json`` atomically (temp file + ``os.replace``), redacted by ``policy``."""
    atomic_write_json(path, redacted_run_info(info, policy), durable=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def effective_status(info: Dict[str, Any], now: Optional[_dt.datetime] = None) -> str:
    """The status to report: a ``running`` run whose process is gone is ``crashed``.

    A run is considered dead when its heartbeat is older than ``STALE_INTERVALS`` heartbeat
    intervals, or (on the same host) when its process no longer exists.
    """
    status = info.get("status", RUNNING)
    if status != RUNNING:
        return status
    if (
        info.get("host") == socket.gethostname()
        and isinstance(info.get("pid"), int)
        and info.get("pid") != os.getpid()
        and not _pid_alive(info["pid"])
    ):
        return CRASHED
    beat = parse_time(info.get("heartbeat")) or parse_time(info.get("start_time"))
    if beat is None:
        return status
    now = now or _dt.datetime.now().astimezone()
    if beat.tzinfo is None:
        beat = beat.astimezone()
    interval = float(info.get("heartbeat_interval") or DEFAULT_HEARTBEAT_INTERVAL)
    if (now - beat).total_seconds() > STALE_INTERVALS * interval:
        return CRASHED
    return status
