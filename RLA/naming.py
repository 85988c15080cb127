"""Run names and indexes: format, sanitise and parse ``<HH-MM-SS-ffffff>_<ip>_&k=v...``.

Pure functions; the only code that knows the name grammar. Legacy names of the original
(fields separated by spaces instead of ``_``) parse too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence, Tuple

#: Byte budget of a run name: 255 (one path component) minus room for ".json" of the
#: archive_tester file, so every data type of a run fits.
MAX_NAME_BYTES = 250
TIME_FORMAT = "%H-%M-%S-%f"
DATE_FORMAT = "%Y/%m/%d"
INDEX_FORMAT = DATE_FORMAT + "/" + TIME_FORMAT

TIME_RE = r"\d{2}-\d{2}-\d{2}-\d{6}"
DATE_RE = r"\d{4}/\d{2}/\d{2}"
_NAME_RE = re.compile(rf"^(?P<time>{TIME_RE})(?:(?P<sep>[_ ])(?P<ip>[^_ &]*))?(?:[_ ](?P<info>&.*))?$")
# Characters that are unsafe in a path component, a shell glob or the name grammar itself.
_UNSAFE = re.compile(r"[/\\:*?\"<>|&\x00-\x1f\x7f]")


def sanitize_value(value: Any) -> str:
    """Render a hyper-parameter value for a directory name.

    Lists and tuples are shown as ``{a, b}`` (as the original did); ``/`` and every
    character unsafe in a path or a glob become ``_``.
    """
    text = str(list(value)) if isinstance(value, tuple) else str(value)
    text = text.replace("[", "{").replace("]", "}")
    return _UNSAFE.sub("_", text)


def sanitize_key(key: str) -> str:
    """Render a hyper-parameter key (dots of nested keys are kept)."""
    return _UNSAFE.sub("_", str(key)).replace("=", "_")


def format_info(tracked: Iterable[Tuple[str, Any]]) -> str:
    """``&k1=v1&k2=v2`` for the tracked hyper-parameters (``&`` alone when there are none)."""
    return "&" + "&".join(f"{sanitize_key(k)}={sanitize_value(v)}" for k, v in tracked)


def cap_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """Cut ``name`` to ``limit`` UTF-8 bytes, ending it with ``~<hash>`` of the full name."""
    raw = name.encode("utf-8")
    if len(raw) <= limit:
        return name
    digest = hashlib.sha1(raw).hexdigest()[:10]
    budget = limit - len(digest) - 1
    cut = raw[:budget].decode("utf-8", errors="ignore")
    return f"{cut}~{digest}"


def format_run_name(when: _dt.datetime, ip: str, tracked: Sequence[Tuple[str, Any]]) -> str:
    """Build the directory name of a run.

    Args:
        when: local start time (microsecond resolution).
        ip: the host's IP address (``noip`` when unknown).
        tracked: (key, value) pairs in the order they were added.
    """
    ip = _UNSAFE.sub("_", ip).replace("_", "-").replace(" ", "-") or "noip"
    return cap_name(f"{when.strftime(TIME_FORMAT)}_{ip}_{format_info(tracked)}")


@dataclass(frozen=True)
class RunName:
    """The parts of a parsed run directory name."""

    time: str
    ip: str
    info: str
    legacy: bool

    @property
    def params(self) -> List[Tuple[str, str]]:
        """The ``k=v`` pairs shown in the name (strings, possibly sanitised or cut)."""
        pairs = []
        for item in self.info.lstrip("&").split("&"):
            if not item:
                continue
            key, _, val = item.partition("=")
            pairs.append((key, val))
        return pairs


def parse_run_name(name: str) -> Optional[RunName]:
    """Parse a run directory name (current or legacy); ``None`` if it is not one."""
    match = _NAME_RE.match(name)
    if not match:
        return None
    return RunName(
        time=match["time"], ip=match["ip"] or "", info=match["info"] or "", legacy=match["sep"] == " "
    )


def index_time(index_or_date: str) -> _dt.datetime:
    """The start time encoded in an index or a ``YYYY/MM/DD/HH-MM-SS-ffffff`` record date."""
    match = re.search(rf"({DATE_RE}/{TIME_RE})", index_or_date)
    if not match:
        raise ValueError(f"no {INDEX_FORMAT!r} date in {index_or_date!r}")
    return _dt.datetime.strptime(match.group(1), INDEX_FORMAT)
