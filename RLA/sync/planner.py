"""The sync planner: pure diffs of two file listings into transfer steps (no I/O)."""

from __future__ import annotations

import enum
import fnmatch
import posixpath
from dataclasses import dataclass
from typing import List, Mapping, Optional, Tuple

from RLA.sync.manifest import FileRecord, Pending

#: Files a run only ever appends to (the logger's text outputs, TensorBoard events, JSON
#: lines). Only their new bytes travel, after the old prefix is checked against its hash.
APPEND_ONLY_PATTERNS = (
    "progress.csv",
    "progress.json",
    "log.txt",
    "warn.txt",
    "backup.txt",
    "*.jsonl",
    "events.out.tfevents.*",
    "*.tfevents.*",
)
#: Sent last so that the main node sees a run's metadata only after its data.
LAST_FILES = ("run.json",)


class Action(enum.Enum):
    """What to do with one file."""

    UPLOAD = "upload"  # whole file to a temporary name, then rename
    RESUME = "resume"  # continue an interrupted UPLOAD of the same local file
    APPEND = "append"  # send only bytes past ``offset`` (if the prefix is unchanged)
    DELETE = "delete"  # the file was sent before and is gone locally
    DOWNLOAD = "download"  # pull: whole file to a temporary name, then rename
    FETCH = "fetch"  # pull: only the bytes past ``offset`` of an append-only file


@dataclass(frozen=True)
class LocalFile:
    """A local file of a run (``key`` = ``<data_type>/<path inside the run>``).

    ``lpath`` is the file that is read (for a link inside the run folder: its target);
    ``mode`` its permission bits, given to the copy on the main node; ``identity`` the
    ``(st_dev, st_ino)`` seen by the walk, so the file opened later is the file listed.
    """

    lpath: str
    size: int
    mtime_ns: int
    mode: Optional[int] = None
    identity: Optional[Tuple[int, int]] = None


@dataclass(frozen=True)
class RemoteFile:
    """A remote file of a run; ``mode`` is what the server said (``None``: nothing)."""

    size: int
    mtime: Optional[float]
    mode: Optional[int] = None


@dataclass(frozen=True)
class Step:
    """One planned transfer."""

    action: Action
    key: str
    offset: int = 0


def is_append_only(key: str) -> bool:
    """Whether the file named by ``key`` only grows (by name)."""
    name = posixpath.basename(key)
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in APPEND_ONLY_PATTERNS)


def _order(key: str) -> tuple:
    return (posixpath.basename(key) in LAST_FILES, key)


def plan_push(
    local: Mapping[str, LocalFile], sent: Mapping[str, FileRecord], pending: Optional[Pending] = None
) -> List[Step]:
    """Steps that make the target equal to ``local``, given what was ``sent`` before.

    A file whose size and mtime equal its record is skipped without asking the remote.
    """
    steps: List[Step] = []
    for key in sorted(local, key=_order):
        now = local[key]
        record = sent.get(key)
        if (
            record is not None
            and record.size == now.size
            and record.mtime_ns == now.mtime_ns
            and (record.mode is None or record.mode == now.mode)
        ):
            continue
        if (
            pending is not None
            and pending.key == key
            and pending.size == now.size
            and pending.mtime_ns == now.mtime_ns
        ):
            steps.append(Step(Action.RESUME, key))
        elif record is not None and is_append_only(key) and now.size >= record.size:
            steps.append(Step(Action.APPEND, key, record.size))
        else:
            steps.append(Step(Action.UPLOAD, key))
    steps.extend(Step(Action.DELETE, key) for key in sorted(set(sent) - set(local)))
    return steps


def plan_pull(remote: Mapping[str, RemoteFile], local: Mapping[str, LocalFile]) -> List[Step]:
    """Steps that bring the remote files of a run to the local side.

    A local file of the same size and (whole-second) mtime is up to date; a shorter local
    copy of an append-only file fetches only the missing tail.
    """
    steps: List[Step] = []
    for key in sorted(remote, key=_order):
        there = remote[key]
        here = local.get(key)
        if (
            here is not None
            and here.size == there.size
            and (there.mtime is None or int(here.mtime_ns // 1_000_000_000) == int(there.mtime))
        ):
            continue
        if here is not None and is_append_only(key) and here.size < there.size:
            steps.append(Step(Action.FETCH, key, here.size))
        else:
            steps.append(Step(Action.DOWNLOAD, key))
    return steps


def drop_oversize(
    steps: List[Step], sizes: Mapping[str, int], limit: Optional[int]
) -> Tuple[List[Step], List[str]]:
    """The steps without transfers of files larger than ``limit`` bytes, and the keys dropped.

    Deletions stay (they move no bytes); ``limit=None`` keeps everything.
    """
    if limit is None:
        return steps, []
    kept: List[Step] = []
    dropped: List[str] = []
    for step in steps:
        if step.action is not Action.DELETE and sizes.get(step.key, 0) > limit:
            dropped.append(step.key)
        else:
            kept.append(step)
    return kept, dropped
