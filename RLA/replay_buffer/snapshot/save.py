"""Save a ReplayBuffer shard and publish the snapshot atomically (sync path)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import uuid
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from RLA.errors import DiskFullError, ReplayBufferError
from RLA.fs import DISK_FULL_ERRNOS, atomic_write_json, disk_full_error, fsync_dir
from RLA.replay_buffer import episodes as ep_mod
from RLA.replay_buffer.libc import rename_exchange
from RLA.replay_buffer.snapshot import faults
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import staging as staging_mod
from RLA.replay_buffer.snapshot.commit import Committer, make_committer
from RLA.replay_buffer.snapshot.retention import apply_keep_last, collect_garbage
from RLA.replay_buffer.snapshot.shard_io import (
    Capture,
    ChunkSource,
    capture,
    live_source,
    store_key,
    write_shard,
)
from RLA.version import __version__

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer

log = logging.getLogger("RLA.replay_buffer")


def next_seq(store: Path) -> int:
    snaps = fmt.list_snapshots(store)
    return snaps[-1][0] + 1 if snaps else 1


def _listed_shards(staging: Path, world_size: int) -> Tuple[List[Dict[str, Any]], List[Any]]:
    """Every rank's shard manifest in ``staging``: its manifest record (size, CRC) and content."""
    shards, contents = [], []
    for rank in range(world_size):
        path = staging / fmt.shard_file(rank)
        data = path.read_bytes()
        contents.append(json.loads(data))
        shards.append(
            {
                "rank": rank,
                "file": path.name,
                "bytes": len(data),
                "crc32": zlib.crc32(data),
                "size": contents[-1].get("size"),
            }
        )
    return shards, contents


def exists_error(target: Path) -> ReplayBufferError:
    """A save that would replace the snapshot ``target`` without ``overwrite``."""
    return ReplayBufferError(
        f"Snapshot {target} already exists",
        expected="a new snapshot id",
        found="an existing snapshot",
        fix="pass another snapshot_id or overwrite=True",
    )


def _rename_into_place(store: Path, staging: Path, snap_id: str) -> None:
    """``staging`` becomes ``store/snap_id``; a snapshot there is swapped out and removed."""
    target = store / snap_id
    old = None
    if target.exists() and rename_exchange(staging, target):
        old = staging  # now holds the replaced snapshot
    else:
        if target.exists():
            old = store / f"{fmt.REPLACED_PREFIX}{snap_id}-{uuid.uuid4().hex[:6]}"
            os.rename(target, old)
        os.rename(staging, target)
    faults.point("replay.publish:renamed")
    fsync_dir(store)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def publish(
    store: Path,
    staging: Path,
    snap_id: str,
    seq: int,
    world_size: int,
    kind: str = "ReplayBuffer",
    provenance: Optional[Dict[str, Any]] = None,
    overwrite: bool = False,
    durable: bool = True,
) -> Path:
    """Write MANIFEST.json (listing every shard with size and CRC) and rename into place.

    Readers see the previous snapshot until the rename and the whole new one after it. An
    ``overwrite`` swaps the two folders in one step where the system can (RENAME_EXCHANGE);
    elsewhere the old one is moved to ``.replaced-<id>-*`` first, which the next save puts
    back if a crash left no ``<id>``. Fault points (faults.py) mark each step.
    """
    faults.point("replay.publish:staging-written")
    shards, contents = _listed_shards(staging, world_size)
    manifest = {
        "format": fmt.FORMAT,
        "format_version": fmt.FORMAT_VERSION,
        "library_version": __version__,
        "kind": kind,
        "snapshot_id": snap_id,
        "seq": seq,
        "created": time.time(),
        "world_size": world_size,
        "checksum": fio.CHECKSUM,
        "shards": shards,
        "episode_report": fmt.total_episode_report(contents),
        "provenance": provenance,
    }
    atomic_write_json(staging / fmt.MANIFEST, manifest, durable=durable)
    fsync_dir(staging)
    faults.point("replay.publish:manifest-written")
    if (store / snap_id).exists() and not overwrite:
        raise exists_error(store / snap_id)
    faults.point("replay.publish:before-rename")
    _rename_into_place(store, staging, snap_id)
    return store / snap_id


def as_disk_full(exc: BaseException, store: Path) -> BaseException:
    """``exc`` as a :class:`DiskFullError` naming the file (or the store) and the free space
    when it is ENOSPC/EDQUOT; any other error unchanged."""
    if isinstance(exc, OSError) and not isinstance(exc, DiskFullError) and exc.errno in DISK_FULL_ERRNOS:
        error = disk_full_error(exc.filename or store, exc)
        error.__cause__ = exc
        return error
    return exc


def discard(cap: Capture, staging: Path) -> None:
    """Remove what a failed save wrote: its staging folder and its new segments (no
    snapshot references them; on a full disk this gives the space back at once)."""
    shutil.rmtree(staging, ignore_errors=True)
    for rec in cap.written.values():
        with contextlib.suppress(OSError):
            os.unlink(cap.store / rec["file"])


@dataclass(frozen=True)
class SaveOptions:
    """How one snapshot is written (``ReplayBuffer.dumps`` / ``dumps_async`` take these).

    Attributes:
        incremental: reuse segments already in the store that did not change.
        rank, world_size: shard of this process (default: the buffer's).
        snapshot_id: directory name (default ``snap-<seq>``).
        keep_last: keep only the newest N complete snapshots (None: keep all).
        durable: fsync every file before publishing (off only for throwaway data).
        overwrite: replace an existing snapshot with the same id (atomically).
        group: torch.distributed process group of the ranks.
        barrier: ``"torch"``, ``"file"`` or None (torch when initialised, else files).
        barrier_timeout: seconds to wait for the other ranks.
        provenance: recorded in the manifest (tools record their sources).
        dedup: TED/flat pairs ``{"next.obs": "obs"}``: rows equal to the successor's field
            (checked on the data) are not stored; all others are kept as exceptions.
    """

    incremental: bool = True
    rank: Optional[int] = None
    world_size: Optional[int] = None
    snapshot_id: Optional[str] = None
    keep_last: Optional[int] = None
    durable: bool = True
    overwrite: bool = False
    group: Any = None
    barrier: Optional[str] = None
    barrier_timeout: float = 600.0
    provenance: Optional[Dict[str, Any]] = None
    dedup: Optional[Dict[str, str]] = None


@dataclass(frozen=True)
class Job:
    """A save whose state is captured: the shard to write, the ranks' committer, where."""

    cap: Capture
    comm: Committer
    staging: Path
    snap_id: str
    seq: int


def run_save(buf: "ReplayBuffer", job: Job, source: ChunkSource, options: SaveOptions) -> Path:
    """Phases 1 and 2 for this rank, then retention and segment GC."""
    cap = job.cap
    try:
        published = commit_shard(job, source, options, buf.session)
    finally:
        staging_mod.release(job.staging)
    key = store_key(cap.store, cap.rank)
    buf.persisted[key] = {**cap.reuse, **cap.written}
    collect_garbage(cap.store, cap.rank, {r["file"] for r in buf.persisted[key].values()})
    log.info(
        "replay snapshot %s rank %d: %d new segment(s), %d reused; %s",
        published,
        cap.rank,
        len(cap.written),
        len(cap.reuse),
        ep_mod.describe_report(cap.header["episode_report"]),
    )
    return published


def _publish_if_all_wrote(
    job: Job, statuses: List[Tuple[bool, str]], options: SaveOptions
) -> Tuple[bool, str, Optional[BaseException]]:
    """The coordinator publishes when every rank wrote its shard: (published, why not, error)."""
    failed = [f"rank {r}: {msg}" for r, (ok, msg) in enumerate(statuses) if not ok]
    if failed:
        return False, "; ".join(failed), None
    cap, published = job.cap, False
    try:
        publish(
            cap.store,
            job.staging,
            job.snap_id,
            job.seq,
            cap.world_size,
            provenance=options.provenance,
            overwrite=options.overwrite,
            durable=options.durable,
        )
        published = True
        apply_keep_last(cap.store, options.keep_last, protect=job.snap_id)
        return True, "", None
    except BaseException as exc:  # noqa: BLE001 - every rank is told, then it is raised
        return published, repr(exc), as_disk_full(exc, cap.store)


def commit_shard(job: Job, source: ChunkSource, options: SaveOptions, session: str) -> Path:
    """Write this rank's shard, then publish if every rank succeeded; a full disk is a
    :class:`DiskFullError`, and a failed save leaves nothing behind."""
    cap = job.cap
    error: Optional[BaseException] = None
    try:
        write_shard(cap, job.staging, session, source, durable=options.durable)
    except BaseException as exc:  # noqa: BLE001 - reported to every rank, re-raised below
        error = as_disk_full(exc, cap.store)
    statuses = job.comm.gather(error is None, repr(error) if error else "", job.staging)
    published, why = False, ""
    if job.comm.is_coordinator:
        published, why, failure = _publish_if_all_wrote(job, statuses, options)
        error = error or failure
    published, why = job.comm.outcome(published, why, cap.store, job.snap_id)
    if not published:
        discard(cap, job.staging)
        if error is not None:
            raise error
        raise ReplayBufferError(
            "The snapshot was not published",
            expected="every rank to write its shard",
            found=why,
            fix="fix the failing rank and save again; the previous snapshot is intact",
        )
    return cap.store / job.snap_id


def prepare(
    buf: "ReplayBuffer", path: Any, options: SaveOptions
) -> Tuple[Path, int, int, Committer, int, str]:
    """Check the options and agree with the other ranks: store, rank, world size, committer,
    sequence number and snapshot id."""
    if options.keep_last is not None and int(options.keep_last) < 1:
        raise ReplayBufferError(
            "keep_last must be at least 1",
            expected=">= 1 or None",
            found=str(options.keep_last),
            fix="keep at least one snapshot",
        )
    store = Path(path)
    store.mkdir(parents=True, exist_ok=True)
    rank = buf.rank if options.rank is None else int(options.rank)
    world_size = buf.world_size if options.world_size is None else int(options.world_size)
    if not 0 <= rank < world_size:
        raise ReplayBufferError(
            "Bad rank for a sharded save",
            expected=f"0 <= rank < {world_size}",
            found=str(rank),
            fix="pass rank and world_size of this process",
        )
    comm = make_committer(rank, world_size, options.group, options.barrier, options.barrier_timeout)
    seq = next_seq(store)
    snap_id = options.snapshot_id or f"snap-{seq:08d}"
    if snap_id.startswith(".") or "/" in snap_id or snap_id == fmt.SEGMENTS:
        raise ReplayBufferError(
            "Bad snapshot id",
            expected="a plain directory name",
            found=repr(snap_id),
            fix="pick another snapshot_id",
        )
    if (store / snap_id).exists() and not options.overwrite:
        raise exists_error(store / snap_id)
    comm.agree((snap_id, world_size))
    return store, rank, world_size, comm, seq, snap_id


@contextmanager
def captured(buf: "ReplayBuffer", path: Any, options: SaveOptions) -> Iterator[Job]:
    """Prepare the save and capture the buffer's state; the block runs under the buffer lock.

    The one start of both the synchronous and the background save. A capture that fails
    leaves no staging folder behind.
    """
    store, rank, world_size, comm, seq, snap_id = prepare(buf, path, options)
    staging = comm.staging(store, snap_id)
    with buf.lock:
        try:
            cap = capture(buf, store, rank, world_size, options.incremental, options.dedup)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            staging_mod.release(staging)
            raise
        yield Job(cap, comm, staging, snap_id, seq)


def save_buffer(buf: "ReplayBuffer", path: Any, options: SaveOptions) -> Path:
    """Synchronously write one snapshot of ``buf`` (this rank's shard) into the store ``path``.

    Returns:
        The published snapshot directory.
    """
    with captured(buf, path, options) as job:
        with live_source(buf, job.cap.header["segment_fields"]) as source:
            return run_save(buf, job, source, options)
