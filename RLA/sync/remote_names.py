"""Names a sync server lists, checked against the run layout before any local path is built.

A server (or anyone on a clear-text FTP path) chooses every name ``rla sync pull`` sees.
A name becomes part of a local path only when it fits the layout
``<data_type>/<task...>/<YYYY>/<MM>/<DD>/<name>[/<file path>]``: a known data type, task
and file components that are plain names (:func:`RLA.safe_paths.check_name`), date
components of ASCII digits, a run name that parses. The destination built from them is
then checked with :func:`RLA.safe_paths.safe_join` (no link on the way, inside the data root).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence, Tuple

from RLA.errors import UnsafePathError
from RLA.layout import ARCHIVE_TESTER, DATA_TYPES, RunLayout, check_task
from RLA.naming import parse_run_name
from RLA.safe_paths import check_name, check_relative, is_plain_name, safe_join

_DATE_PARTS = (re.compile(r"[0-9]{4}"), re.compile(r"[0-9]{2}"), re.compile(r"[0-9]{2}"))


def is_day(parts: Sequence[str]) -> bool:
    """Whether the last three of ``parts`` are ``YYYY``, ``MM``, ``DD`` in ASCII digits (after a task)."""
    return len(parts) >= 4 and all(p.fullmatch(part) for p, part in zip(_DATE_PARTS, parts[-3:], strict=True))


def check_data_type(data_type: str) -> str:
    """``data_type`` when it is one of :data:`RLA.layout.DATA_TYPES`, else raise."""
    if data_type not in DATA_TYPES:
        raise UnsafePathError(
            f"The data type {data_type!r} is refused",
            expected=f"one of {', '.join(DATA_TYPES)}",
            found=repr(data_type),
            fix="sync the known data types only",
        )
    return data_type


def check_run_name(name: str) -> str:
    """A run folder name as listed by a server: one plain component that parses as a run name."""
    check_name(name, "run name")
    if name.startswith(".") or parse_run_name(name) is None:
        raise UnsafePathError(
            f"The run name {name!r} is refused",
            expected="HH-MM-SS-ffffff[_ip][_&k=v...]",
            found=repr(name),
            fix="only runs named by RLA are synced",
        )
    return name


def check_run(task: str, date: str, name: str) -> Tuple[str, str, str]:
    """Check the three parts of a run's place (``task``, ``YYYY/MM/DD``, ``name``); return them."""
    task_parts = check_relative(task, "task")
    if any(part.startswith(".") for part in task_parts):
        raise UnsafePathError(
            f"The task {task!r} is refused: a component is hidden",
            expected="task components that do not start with '.'",
            found=repr(task),
            fix="rename the task",
        )
    check_task(task)  # also refuses 'arc:<task>', the index key of an archived run
    date_parts = date.split("/")
    if len(date_parts) != 3 or not is_day(["task", *date_parts]):
        raise UnsafePathError(
            f"The date {date!r} is refused",
            expected="YYYY/MM/DD in digits",
            found=repr(date),
            fix="only runs in the RLA layout are synced",
        )
    return task, date, check_run_name(name)


def check_key(key: str) -> Tuple[str, Tuple[str, ...]]:
    """``(data_type, file path components)`` of a sync key, every part checked."""
    data_type, _, inner = key.partition("/")
    check_data_type(data_type)
    if data_type == ARCHIVE_TESTER:
        if inner:
            raise UnsafePathError(
                f"The key {key!r} is refused",
                expected="'archive_tester' alone",
                found=repr(key),
                fix="archive_tester is one file per run",
            )
        return data_type, ()
    return data_type, check_relative(inner, "file path")


def is_plain_component(name: object) -> bool:
    """A listed folder entry that may be descended into while looking for runs."""
    return is_plain_name(name) and not str(name).startswith(".")


def local_destination(local: RunLayout, key: str) -> Path:
    """The local path of ``key`` for the run ``local``, refused unless it is safe to write.

    Every component is checked (layout and plain names), no existing component from the
    data root down is a symbolic link, and the path resolves inside the data root.

    Raises:
        UnsafePathError: with what was refused and why.
    """
    check_run(local.task, local.date, local.name)
    data_type, inner = check_key(key)
    rel = Path(local.path(data_type)).relative_to(local.data_root).joinpath(*inner)
    return safe_join(local.data_root, rel.as_posix(), "pulled file")
