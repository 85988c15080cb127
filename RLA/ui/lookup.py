"""Find one run from the index a request names, without walking the whole database.

An index ``<task>/<YYYY>/<MM>/<DD>/<HH-MM-SS-ffffff>`` names one day folder; the run is
the entry of that folder whose name starts with the time. Every component is checked
with :mod:`RLA.safe_paths` first, so an index can never point outside the data root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional

from RLA.errors import RunNotFoundError, UnsafePathError
from RLA.layout import DATA_TYPES, RunLayout, type_root
from RLA.naming import DATE_RE, TIME_RE, parse_run_name
from RLA.safe_paths import check_relative

_INDEX_RE = re.compile(rf"^(?P<task>.+)/(?P<date>{DATE_RE})/(?P<time>{TIME_RE})$")


def _not_found(index: str, found: str) -> RunNotFoundError:
    return RunNotFoundError(
        f"No run {index!r}",
        expected="an index task/YYYY/MM/DD/HH-MM-SS-ffffff of a run in this data root",
        found=found,
        fix="pick a run from the runs page",
    )


def resolve_run(data_root: os.PathLike, index: str, archived: Optional[bool] = None) -> RunLayout:
    """The run named by ``index`` (active first, then archived, unless ``archived`` says which).

    Raises:
        UnsafePathError: the index has ``..``, an absolute path or control characters.
        RunNotFoundError: the index is malformed or no such run exists.
    """
    if not isinstance(index, str):
        raise _not_found(str(index), "not a string")
    match = _INDEX_RE.match(index)
    if not match:
        raise _not_found(index, "a malformed index")
    check_relative(index, "run index")
    for flag in (False, True) if archived is None else (archived,):
        for data_type in DATA_TYPES:
            day = type_root(data_root, data_type, flag) / match["task"] / match["date"]
            name = _name_in(day, match["time"])
            if name is not None:
                return RunLayout(Path(data_root), match["task"], match["date"], name, flag)
    raise _not_found(index, "no such run")


def _name_in(day: Path, time: str) -> Optional[str]:
    """The run directory (or archive_tester ``.json``) name in ``day`` for ``time``."""
    try:
        names: List[str] = [entry.name for entry in os.scandir(day) if entry.name.startswith(time)]
    except (FileNotFoundError, NotADirectoryError):
        return None
    for name in sorted(names):
        base = re.sub(r"\.(json|pkl)$", "", name)
        parsed = parse_run_name(base)
        if parsed is not None and parsed.time == time:
            return base
    return None


__all__ = ["UnsafePathError", "resolve_run"]
