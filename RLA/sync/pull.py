"""Pulling from the main node: find remote runs by selectors, download one run's files."""
from __future__ import annotations

import io
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Dict, Iterable, List, Optional

from RLA.errors import TransportError
from RLA.layout import ARCHIVE_TESTER, RunLayout
from RLA.naming import DATE_RE, parse_run_name
from RLA.sync.base import Transport
from RLA.sync.planner import Action, RemoteFile, Step
from RLA.sync.runfiles import PART_SUFFIX, key_path

#: Bytes of an append-only file re-read on pull to check that the local copy is a prefix.
OVERLAP = 4096
_DATE = re.compile(DATE_RE)


@dataclass
class RunPullResult:
    """What pulling one run did."""

    received: List[str] = field(default_factory=list)
    fetched: List[str] = field(default_factory=list)


def find_remote_runs(transport: Transport, remote_root: str, data_types: Iterable[str],
                     task: Optional[str] = None,
                     keep: Optional[Callable[[RunLayout], bool]] = None) -> List[RunLayout]:
    """Runs found under ``<remote_root>/<data_type>[/<task>]`` (layouts rooted remotely)."""
    root = PurePosixPath(remote_root)
    found: Dict[str, RunLayout] = {}
    for data_type in data_types:
        base = posixpath.join(remote_root, data_type)
        stack = [task.strip("/")] if task else [""]
        while stack:
            rel = stack.pop()
            parts = rel.split("/") if rel else []
            entries = transport.listdir(posixpath.join(base, rel) if rel else base)
            if len(parts) >= 4 and _DATE.fullmatch("/".join(parts[-3:])):
                for entry in entries:
                    name = entry.name
                    if data_type == ARCHIVE_TESTER:
                        if entry.is_dir or not name.endswith(".json"):
                            continue
                        name = name[:-len(".json")]
                    elif not entry.is_dir:
                        continue
                    if name.startswith(".") or parse_run_name(name) is None:
                        continue
                    layout = RunLayout(Path(root), "/".join(parts[:-3]), "/".join(parts[-3:]), name)
                    if keep is None or keep(layout):
                        found.setdefault(layout.relative, layout)
                continue
            stack.extend(f"{rel}/{e.name}" if rel else e.name for e in entries
                         if e.is_dir and not e.name.startswith("."))
    return sorted(found.values(), key=lambda r: r.relative)


def pull_run(transport: Transport, remote: RunLayout, local: RunLayout, there: Dict[str, RemoteFile],
             steps: List[Step]) -> RunPullResult:
    """Download the planned files of one run; each lands under a temp name, then is renamed.

    Raises:
        TransportError: a transfer failed (complete files are kept; the rest resumes later).
    """
    result = RunPullResult()
    for step in steps:
        rpath = key_path(remote, step.key)
        lpath = Path(key_path(local, step.key))
        lpath.parent.mkdir(parents=True, exist_ok=True)
        size = there[step.key].size
        if step.action is Action.FETCH and _fetch_tail(transport, rpath, lpath, step.offset, size):
            result.fetched.append(step.key)
        else:
            _download(transport, rpath, lpath, size)
            result.received.append(step.key)
        mtime = there[step.key].mtime
        if mtime is not None:
            os.utime(lpath, (mtime, mtime))
    return result


def _fetch_tail(transport: Transport, rpath: str, lpath: Path, offset: int, size: int) -> bool:
    """Append the remote bytes past ``offset``; ``False`` if the local copy is not a prefix."""
    start = max(0, offset - OVERLAP)
    with open(lpath, "r+b") as handle:
        handle.seek(start)
        mine = handle.read(offset - start)
        tail = io.BytesIO()
        transport.get(rpath, tail, start)
        data = tail.getvalue()
        if data[:offset - start] != mine or start + len(data) != size:
            return False
        handle.seek(offset)
        handle.write(data[offset - start:])
        handle.truncate(size)
    return True


def _download(transport: Transport, rpath: str, lpath: Path, size: int) -> None:
    tmp = lpath.with_name(f".{lpath.name}{PART_SUFFIX}")
    with open(tmp, "wb") as handle:
        transport.get(rpath, handle, 0)
    got = tmp.stat().st_size
    if got != size:
        tmp.unlink()
        raise TransportError(f"Downloaded {rpath} has the wrong size", expected=f"{size} bytes",
                             found=f"{got} bytes", fix="pull again")
    os.replace(tmp, lpath)

