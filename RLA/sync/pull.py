"""Pulling from the main node: find remote runs by selectors, download one run's files.

Nothing a server lists is trusted: names are checked against the run layout
(:mod:`RLA.sync.remote_names`) before a local path is built, the destination must lie
inside the data root with no link on the way, a remote link is skipped, a download stops
at the listed size (and at the size cap), and a pulled file is never given a wider mode
than the server reported or the local umask allows.
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional

from RLA.errors import RLAError, UnsafePathError
from RLA.layout import ARCHIVE_TESTER, RunLayout
from RLA.safe_paths import NOFOLLOW, check_relative, is_plain_name, open_dir_inside
from RLA.sync.base import MAX_WALK_DEPTH, PERMISSION_BITS, RemoteEntry, RemoteFileError, Transport
from RLA.sync.planner import Action, RemoteFile, Step
from RLA.sync.remote_names import check_run, is_day, is_plain_component, local_destination
from RLA.sync.runfiles import PART_SUFFIX, Refuse, key_path

#: Bytes of an append-only file re-read on pull to check that the local copy is a prefix.
OVERLAP = 4096
#: Local errors that mean "this destination cannot hold this file" (a folder in the way, a
#: path too long, a name the file system refuses): the file is skipped, the pull goes on.
#: Anything else (a full disk, a read-only data root) still stops the pull.
_DESTINATION_ERRORS = {
    errno.EISDIR: "a folder is in the way",
    errno.ENOTDIR: "a file is in the way",
    errno.ENOTEMPTY: "a folder is in the way",
    errno.EEXIST: "something is in the way",
    errno.ENAMETOOLONG: "the local path is too long",
    errno.ELOOP: "a link is in the way",
    errno.EINVAL: "the local file system refuses the name",
    errno.EILSEQ: "the local file system refuses the name",
}


@dataclass
class RunPullResult:
    """What pulling one run did."""

    received: List[str] = field(default_factory=list)
    fetched: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)


class _Skip(Exception):
    """One file is left out (with the reason); the rest of the pull goes on."""


def _run_of(
    data_type: str, parts: List[str], entry: RemoteEntry, root: Path, refuse: Refuse
) -> Optional[RunLayout]:
    """The run a day folder's entry names, or ``None`` (refused entries are reported)."""
    name = entry.name
    if data_type == ARCHIVE_TESTER:
        if entry.is_dir or not name.endswith(".json"):
            return None
        name = name[: -len(".json")]
    elif not entry.is_dir and not entry.is_link:
        return None
    where = "/".join([data_type, *parts, str(entry.name)])
    try:
        task, date, name = check_run("/".join(parts[:-3]), "/".join(parts[-3:]), name)
    except UnsafePathError as exc:
        if not is_plain_name(entry.name):  # a plain name that is no run (notes.txt, .trash) is just not a run
            refuse(where, exc.problem)
        return None
    if entry.is_link:
        refuse(where, "it is a symbolic link on the server")
        return None
    return RunLayout(root, task, date, name)


def _descend(data_type: str, parts: List[str], entry: RemoteEntry, refuse: Refuse) -> bool:
    """Whether a folder above the day level is looked into (a hostile or linked one is reported)."""
    if not entry.is_dir and not entry.is_link:
        return False
    where = "/".join([data_type, *parts, str(entry.name)])
    if not is_plain_name(entry.name):
        if entry.name not in (".", ".."):
            refuse(where, "its name is not a plain folder name")
        return False
    if entry.is_link:
        refuse(where, "it is a symbolic link on the server")
        return False
    return is_plain_component(entry.name)


def find_remote_runs(
    transport: Transport,
    remote_root: str,
    data_types: Iterable[str],
    task: Optional[str] = None,
    keep: Optional[Callable[[RunLayout], bool]] = None,
    refuse: Optional[Refuse] = None,
) -> List[RunLayout]:
    """Runs found under ``<remote_root>/<data_type>[/<task>]`` (layouts rooted remotely).

    Only plain, non-hidden folder names are descended into (never a link, at most
    :data:`RLA.sync.base.MAX_WALK_DEPTH` levels); a run is kept only when its task, date
    and name fit the layout. Refused names go to ``refuse(path, why)``.

    Raises:
        UnsafePathError: ``task`` is not a plain relative path.
    """
    refuse = refuse or (lambda _where, _why: None)
    start = list(check_relative(task.strip("/"), "task")) if task else []
    found: Dict[str, RunLayout] = {}
    for data_type in data_types:
        base = posixpath.join(remote_root, data_type)
        stack = [start]
        while stack:
            parts = stack.pop()
            entries = transport.listdir(posixpath.join(base, *parts) if parts else base)
            if is_day(parts):
                for entry in entries:
                    layout = _run_of(data_type, parts, entry, Path(remote_root), refuse)
                    if layout is not None and (keep is None or keep(layout)):
                        found.setdefault(layout.relative, layout)
                continue
            if len(parts) < MAX_WALK_DEPTH:
                stack.extend([*parts, e.name] for e in entries if _descend(data_type, parts, e, refuse))
    return sorted(found.values(), key=lambda r: r.relative)


def pull_run(
    transport: Transport,
    remote: RunLayout,
    local: RunLayout,
    there: Dict[str, RemoteFile],
    steps: List[Step],
    max_file_size: Optional[int] = None,
    refuse: Optional[Refuse] = None,
) -> RunPullResult:
    """Download the planned files of one run; each lands under a temp name, then is renamed.

    A file whose destination is refused, that is larger than ``max_file_size``, or that
    does not match its listed size is skipped and reported to ``refuse(key, why)``.

    Raises:
        TransportError: a transfer failed (complete files are kept; the rest resumes later).
    """
    refuse = refuse or (lambda _key, _why: None)
    result = RunPullResult()
    for step in steps:
        listed = there[step.key]
        try:
            lpath = local_destination(local, step.key)
            if max_file_size is not None and listed.size > max_file_size:
                raise _Skip(
                    f"it is {listed.size} bytes, over the cap of {max_file_size} bytes (max_file_size)"
                )
            _pull_file(
                transport,
                key_path(remote, step.key),
                local.data_root,
                lpath,
                step,
                listed,
                max_file_size,
                result,
            )
        except (UnsafePathError, RemoteFileError, _Skip) as exc:
            refuse(step.key, str(exc) if isinstance(exc, _Skip) else exc.problem)
            result.skipped.append(step.key)
        except OSError as exc:
            if exc.errno not in _DESTINATION_ERRORS or isinstance(exc, RLAError):
                raise
            refuse(step.key, f"it cannot be written here: {_DESTINATION_ERRORS[exc.errno]} ({exc.strerror})")
            result.skipped.append(step.key)
    return result


def _pull_file(
    transport: Transport,
    rpath: str,
    data_root: Path,
    lpath: Path,
    step: Step,
    listed: RemoteFile,
    cap: Optional[int],
    result: RunPullResult,
) -> None:
    """One planned file, written only through a descriptor of its (checked) local folder.

    Every local call below is relative to that descriptor (``openat``-style): a folder
    replaced by a link after the checks cannot redirect the write outside the data root.
    """
    dir_fd = open_dir_inside(data_root, lpath.parent)
    try:
        if step.action is Action.FETCH and _fetch_tail(
            transport, rpath, dir_fd, lpath.name, step.offset, listed
        ):
            result.fetched.append(step.key)
        else:
            _download(transport, rpath, dir_fd, lpath.name, listed, cap)
            result.received.append(step.key)
        if listed.mtime is not None:
            os.utime(lpath.name, (listed.mtime, listed.mtime), dir_fd=dir_fd, follow_symlinks=False)
    finally:
        os.close(dir_fd)


def _fetch_tail(
    transport: Transport, rpath: str, dir_fd: int, name: str, offset: int, listed: RemoteFile
) -> bool:
    """Append the remote bytes past ``offset`` to ``name`` in ``dir_fd``; ``False`` if it is not a prefix."""
    start = max(0, offset - OVERLAP)
    fd = os.open(name, os.O_RDWR | NOFOLLOW, dir_fd=dir_fd)
    with os.fdopen(fd, "r+b") as handle:
        handle.seek(start)
        mine = handle.read(offset - start)
        tail = io.BytesIO()
        transport.get(rpath, tail, start, limit=listed.size - start + 1)
        data = tail.getvalue()
        if data[: offset - start] != mine or start + len(data) != listed.size:
            return False
        handle.seek(offset)
        handle.write(data[offset - start :])
        handle.truncate(listed.size)
        if listed.mode is not None:  # only ever narrower: what is here and what the server says
            os.fchmod(handle.fileno(), os.fstat(handle.fileno()).st_mode & listed.mode & PERMISSION_BITS)
    return True


def _download(
    transport: Transport, rpath: str, dir_fd: int, name: str, listed: RemoteFile, cap: Optional[int]
) -> None:
    """The whole file to ``.<name>.rla-part`` in ``dir_fd`` (created exclusively, never through a link), then renamed.

    The read stops one byte past the listed size (and the cap): a server that streams more
    than it listed cannot fill the disk.
    """
    tmp = f".{name}{PART_SUFFIX}"
    try:
        os.unlink(tmp, dir_fd=dir_fd)  # a leftover of a killed pull (a link there is removed, not followed)
    except FileNotFoundError:
        pass
    # The umask applies to the creation mode: never wider than the server said nor the umask allows.
    mode = PERMISSION_BITS & (0o666 if listed.mode is None else listed.mode)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            limit = min(listed.size, cap if cap is not None else listed.size) + 1
            got = transport.get(rpath, handle, 0, limit=limit)
        if cap is not None and got > cap:
            raise _Skip(f"the server sent more than the cap of {cap} bytes (max_file_size); the read was cut")
        if got != listed.size:
            raise _Skip(
                f"the server listed {listed.size} bytes but sent "
                f"{'more' if got > listed.size else got}; pull again if it was still being written"
            )
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
