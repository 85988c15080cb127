"""Mirror the runs of a store into a local cache from one listing per data type.

The cache of :mod:`RLA.sync.remote_root` is brought up to date by listing each mirrored
data type's folder recursively once (on S3: one ``ListObjectsV2`` request per 1,000 keys,
parts joined), comparing every listed file with what the cache recorded when it fetched it
(ETag, size and time), and downloading only what changed, several files at a time. An
unchanged store costs the listing and nothing else. Every listed name goes through the
checks of the pull (:mod:`RLA.sync.remote_names`) before a local path is built; files the
store no longer lists leave the cache.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import posixpath
import queue
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from RLA.errors import UnsafePathError
from RLA.fs import atomic_write_json
from RLA.layout import ARCHIVE, ARCHIVE_TESTER, RunLayout
from RLA.safe_paths import is_plain_name, safe_join
from RLA.sync.base import MAX_WALK_DEPTH, Transport
from RLA.sync.planner import Action, RemoteFile, Step, is_append_only
from RLA.sync.pull import pull_run
from RLA.sync.remote_names import check_run, is_day, is_plain_component
from RLA.sync.runfiles import Refuse, is_transient

#: The cache's record of what it fetched (hidden: never a data type, never listed as a run).
STATE_FILE = ".rla_mirror.json"
STATE_VERSION = 1
#: Files downloaded at the same time (threads; each download is one or a few requests).
WORKERS = 16


@dataclass
class Listed:
    """One file of a run as the store listed it; ``tag`` identifies its content (ETags, or size and time)."""

    size: int
    mtime: Optional[float]
    tag: str
    mode: Optional[int] = None

    def record(self) -> List[object]:
        return [self.tag, self.size, self.mtime]


@dataclass
class StoreRun:
    """The listed files of one run (keys as in :mod:`RLA.sync.runfiles`), rooted remotely."""

    remote: RunLayout
    files: Dict[str, Listed] = field(default_factory=dict)


@dataclass
class MirrorResult:
    """What one refresh did."""

    runs: List[str] = field(default_factory=list)
    fetched: List[str] = field(default_factory=list)
    removed: List[str] = field(default_factory=list)
    skipped: int = 0
    listed_at: float = 0.0


def _place(
    data_type: str, parts: List[str], refuse: Refuse, shown: str = ""
) -> Optional[Tuple[str, str, str, List[str]]]:
    """``(task, date, run name, file path)`` of a listed path below a data type's folder, or ``None``.

    The same walk as :func:`RLA.sync.pull.find_remote_runs`: plain non-hidden folders down
    to the first ``YYYY/MM/DD`` after a task, whose entries are runs (folders; for
    ``archive_tester``, ``<name>.json`` files). Anything else is not a run.
    """
    for depth in range(min(len(parts), MAX_WALK_DEPTH)):
        if is_day(parts[:depth]):
            entry, rest = parts[depth], parts[depth + 1 :]
            if data_type == ARCHIVE_TESTER:
                if rest or not entry.endswith(".json"):
                    return None
                entry = entry[: -len(".json")]
            elif not rest:
                return None  # a file beside the runs of a day
            where = "/".join([shown or data_type, *parts[: depth + 1]])
            try:
                task, date, name = check_run(
                    "/".join(parts[: depth - 3]), "/".join(parts[depth - 3 : depth]), entry
                )
            except UnsafePathError as exc:
                if not is_plain_name(parts[depth]):
                    refuse(where, exc.problem)
                return None
            return task, date, name, rest
        if depth == len(parts) - 1 or not is_plain_component(parts[depth]):
            return None  # a file above the runs, or a hidden folder (.trash); crafted names: refused by walk
    return None


def _prefixed(refuse: Refuse, data_type: str) -> Refuse:
    """``refuse`` for paths relative to one data type's folder."""

    def inner(rel: str, why: str) -> None:
        refuse(f"{data_type}/{rel}", why)

    return inner


def _bases(transport: Transport, remote_root: str, data_types: Sequence[str]) -> List[Tuple[str, bool, str]]:
    """``(data type, archived, folder)`` to list: each data type, and those ``arc/`` holds
    (one listing of ``arc/`` tells which)."""
    bases = [(t, False, posixpath.join(remote_root, t)) for t in data_types]
    archived = {str(e.name) for e in transport.listdir(posixpath.join(remote_root, ARCHIVE)) if e.is_dir}
    return bases + [(t, True, posixpath.join(remote_root, ARCHIVE, t)) for t in data_types if t in archived]


def list_store(
    transport: Transport, remote_root: str, data_types: Sequence[str], refuse: Refuse
) -> Dict[str, StoreRun]:
    """Every run below ``remote_root`` (archived ones under ``arc/`` too) from one recursive
    listing per data type (run key → files; archived runs' keys start with ``arc:``).

    Transient files (``.x.rla-part``), links and special files are left out; crafted names
    are refused by the walk and by :func:`_place`.
    """
    runs: Dict[str, StoreRun] = {}
    tag_of: Callable[[str], str] = getattr(transport, "listed_tag", lambda _path: "")
    for data_type, archived, base in _bases(transport, remote_root, data_types):
        shown = f"{ARCHIVE}/{data_type}" if archived else data_type
        for rel, entry in transport.walk(base, refuse=_prefixed(refuse, shown)):
            parts = rel.split("/")
            if is_transient(parts[-1]):
                continue
            place = _place(data_type, parts, refuse, shown)
            if place is None:
                continue
            task, date, name, inner = place
            key = "/".join([data_type, *inner]) if data_type != ARCHIVE_TESTER else ARCHIVE_TESTER
            if entry.is_link or getattr(entry, "is_special", False):
                refuse(f"{shown}/{rel}", "it is not a regular file on the server (a link, pipe or device)")
                continue
            layout = RunLayout(Path(remote_root), task, date, name, archived)
            run = runs.setdefault(("arc:" if archived else "") + layout.relative, StoreRun(layout))
            tag = tag_of(posixpath.join(base, rel)) or f"{entry.size}@{entry.mtime}"
            run.files[key] = Listed(int(entry.size or 0), entry.mtime, tag, entry.mode)
    return runs


def load_state(cache: Path) -> Dict[str, Any]:
    """The cache's record (``files``: local path → [tag, size, time]; ``listed_at``; ``where``)."""
    try:
        with open(cache / STATE_FILE, "r", encoding="utf-8") as handle:
            raw = json.load(handle)
        if raw.get("version") == STATE_VERSION and isinstance(raw.get("files"), dict):
            return raw
    except (OSError, ValueError, AttributeError):
        pass
    return {"version": STATE_VERSION, "files": {}, "listed_at": 0.0, "where": ""}


def _local_size(path: Path) -> Optional[int]:
    """Size of the regular file at ``path`` (never through a link), ``None`` if there is none."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def plan_run(
    run: StoreRun, local: RunLayout, recorded: Dict[str, list], max_size: int
) -> Tuple[List[Step], Dict[str, RemoteFile]]:
    """The downloads that bring one cached run up to date with its listing.

    A file whose recorded tag, size and time equal the listing's, and whose cached copy
    has that size, is up to date; a grown append-only file fetches only its tail; files
    over ``max_size`` stay on the store.
    """
    steps: List[Step] = []
    there: Dict[str, RemoteFile] = {}
    for key, listed in sorted(run.files.items()):
        if listed.size > max_size:
            continue
        there[key] = RemoteFile(listed.size, listed.mtime, listed.mode)
        path = _cached_path(local, key)
        have = _local_size(path)
        if have == listed.size and recorded.get(_rel(local, path)) == listed.record():
            continue
        if have is not None and is_append_only(key) and have < listed.size:
            steps.append(Step(Action.FETCH, key, have))
        else:
            steps.append(Step(Action.DOWNLOAD, key))
    return steps, there


def _key(run: RunLayout) -> str:
    """The index's key of a run (``arc:`` before an archived run's place)."""
    return ("arc:" if run.archived else "") + run.relative


def _cached_path(local: RunLayout, key: str) -> Path:
    data_type, _, inner = key.partition("/")
    return local.path(data_type).joinpath(*inner.split("/")) if inner else local.path(data_type)


def _rel(local: RunLayout, path: Path) -> str:
    return path.relative_to(local.data_root).as_posix()


Job = Tuple[StoreRun, RunLayout, List[Step], Dict[str, RemoteFile]]


def _download(
    transport: Transport, jobs: List[Job], max_size: int, refuse: Refuse, done: Callable[[Job, object], None]
) -> None:
    """Run the planned downloads of ``jobs`` on up to ``mirror_workers`` channels of ``transport``.

    ``done(job, result)`` is called for each finished run (under the caller's control: the
    first transfer error cancels the rest and is raised).
    """
    lanes = transport.lanes(min(int(getattr(transport, "mirror_workers", 4)), len(jobs)))
    free: "queue.Queue[Transport]" = queue.Queue()
    for lane in lanes:
        free.put(lane)

    def one(job: Job) -> object:
        lane = free.get()
        try:
            run, local, steps, there = job
            return pull_run(lane, run.remote, local, there, steps, max_size, refuse=refuse)
        finally:
            free.put(lane)

    try:
        with concurrent.futures.ThreadPoolExecutor(len(lanes), thread_name_prefix="rla-mirror") as pool:
            futures = {pool.submit(one, job): job for job in jobs}
            for future in concurrent.futures.as_completed(futures):
                if future.exception() is not None:
                    for other in futures:
                        other.cancel()
                    raise future.exception()  # type: ignore[misc]
                done(futures[future], future.result())
    finally:
        for twin in lanes[1:]:
            transport.bytes_received += twin.bytes_received
            twin.close()


def _drop(cache: Path, rel: str) -> bool:
    """Remove the cached file ``rel`` (never through a link, never outside the cache)."""
    try:
        path = safe_join(cache, rel, "cached file")
    except UnsafePathError:
        return False
    if _local_size(path) is None:
        return False
    path.unlink()
    return True


def _mark_changed(
    cache: Path, fetched: List[RunLayout], removed: List[str], runs: Dict[str, StoreRun]
) -> None:
    """Tell the query's index which cached runs changed in place (fetched or removed files).

    The index trusts a settled run until its periodic re-check; a run the refresh rewrote
    must be read again at the next query.
    """
    from RLA.query.catalog import mark_changed

    touched = {_key(run): run for run in fetched}
    if removed:
        folders: Dict[str, RunLayout] = {}
        for run in runs.values():
            local = run.remote.moved(data_root=cache)
            for data_type in {key.partition("/")[0] for key in run.files}:
                folders[_rel(local, local.path(data_type))] = local
        for rel in removed:
            parts = rel.split("/")
            owner = next(
                (folders[p] for p in ("/".join(parts[:i]) for i in range(1, len(parts))) if p in folders),
                None,
            )
            if owner is not None:
                touched.setdefault(_key(owner), owner)
    if touched:
        mark_changed(cache, list(touched.values()))


def _plan_downloads(
    runs: Dict[str, StoreRun], cache: Path, recorded: Dict[str, list], max_size: int
) -> Tuple[Dict[str, list], List[Job]]:
    """The records of cached files still current, and one download job per run with files to fetch."""
    records: Dict[str, list] = {}
    jobs: List[Job] = []
    for run in runs.values():
        local = run.remote.moved(data_root=cache)
        steps, there = plan_run(run, local, recorded, max_size)
        planned = {step.key for step in steps}
        for key in there:
            if key not in planned:
                records[_rel(local, _cached_path(local, key))] = run.files[key].record()
        if steps:
            jobs.append((run, local, steps, there))
    return records, jobs


def mirror(
    transport: Transport,
    remote_root: str,
    cache: Path,
    data_types: Sequence[str],
    max_size: int,
    refuse: Refuse,
    where: str = "",
) -> MirrorResult:
    """Bring ``cache`` up to date with the runs below ``remote_root`` (see the module's doc).

    The record of fetched files is saved even when a transfer fails half-way, so the next
    refresh fetches only what is still missing.

    Raises:
        TransportError: the listing or a transfer failed.
    """
    state = load_state(cache)
    files = state["files"]
    recorded: Dict[str, list] = (
        {k: v for k, v in files.items() if isinstance(v, list)} if isinstance(files, dict) else {}
    )
    result = MirrorResult(listed_at=time.time())
    runs = list_store(transport, remote_root, data_types, refuse)
    result.runs = sorted(runs)
    records, jobs = _plan_downloads(runs, cache, recorded, max_size)
    changed: Dict[str, RunLayout] = {}

    def done(job: Job, outcome: object) -> None:
        run, local, _steps, _there = job
        for key in [*outcome.received, *outcome.fetched]:  # type: ignore[attr-defined]
            records[_rel(local, _cached_path(local, key))] = run.files[key].record()
            result.fetched.append(f"{run.remote.relative} {key}")
            changed[_key(local)] = local
        result.skipped += len(outcome.skipped)  # type: ignore[attr-defined]

    try:
        if jobs:
            _download(transport, jobs, max_size, refuse, done)
    except BaseException:
        atomic_write_json(
            cache / STATE_FILE,
            {"version": STATE_VERSION, "where": where, "listed_at": 0.0, "files": {**recorded, **records}},
            durable=False,
        )
        raise
    result.removed = [rel for rel in sorted(set(recorded) - set(records)) if _drop(cache, rel)]
    _mark_changed(cache, list(changed.values()), result.removed, runs)
    atomic_write_json(
        cache / STATE_FILE,
        {"version": STATE_VERSION, "where": where, "listed_at": result.listed_at, "files": records},
        durable=False,
    )
    return result
