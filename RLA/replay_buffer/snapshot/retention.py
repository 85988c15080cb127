"""Retention of published snapshots (``keep_last``) and garbage collection of segments."""

from __future__ import annotations

import os
import shutil
import uuid
import warnings
from pathlib import Path
from typing import List, Optional, Set

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.fs import fsync_dir
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import staging, validate
from RLA.replay_buffer.snapshot.file_io import read_json_verified


def apply_keep_last(store: Path, keep_last: Optional[int], protect: str) -> List[str]:
    """Keep the newest ``keep_last`` intact snapshots and delete every older one; never
    ``protect``.

    Only intact snapshots count (see :func:`intact`), so an incomplete or damaged one never
    pushes the only good snapshot out; a damaged one newer than the oldest kept is left for
    inspection. Returns the deleted ids.
    """
    if keep_last is None:
        return []
    if int(keep_last) < 1:
        raise ReplayBufferError(
            "keep_last must be at least 1",
            expected=">= 1 or None",
            found=str(keep_last),
            fix="keep at least one snapshot",
        )
    snaps = fmt.list_snapshots(store)
    good = [i for i, s in enumerate(snaps) if s[2] == protect or intact(store, s[3])]
    if len(good) <= int(keep_last):
        return []
    oldest_kept = good[-int(keep_last)]
    doomed = [s for s in snaps[:oldest_kept] if s[2] != protect]
    deleted = []
    for _, _, snap_id, path in doomed:
        trash = store / f"{fmt.DELETING_PREFIX}{snap_id}-{uuid.uuid4().hex[:6]}"
        os.rename(path, trash)  # disappears atomically, then the slow delete
        shutil.rmtree(trash, ignore_errors=True)
        deleted.append(snap_id)
    if deleted:
        fsync_dir(store)
    return deleted


def intact(store: Path, snap: Path) -> bool:
    """True when ``snap``'s manifests parse and verify and every file they list exists with
    its listed size (cheap: no payload is read, so a flipped bit is only found by a load or
    ``rla buffer verify``)."""
    return listed_files(store, snap) is not None


def listed_files(store: Path, snap: Path) -> Optional[List[Path]]:
    """The files ``snap``'s verified shard manifests list (segments, shard arrays), or None
    unless the snapshot is intact (see :func:`intact`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # extra files: reported when the snapshot is loaded
            shards = validate.read_shards(snap, fmt.read_manifest(snap))
        files = []
        for shard in shards.values():
            files += [(store / seg["file"], seg["bytes"]) for seg in fmt.segment_records(shard)]
            files += [(snap / a["file"], a["bytes"]) for a in shard.get("arrays", {}).values()]
        if any(os.stat(path).st_size != size for path, size in files):
            return None
    except (CorruptSnapshotError, ReplayBufferError, OSError, KeyError, TypeError):
        return None
    return [path for path, _ in files]


def referenced_segments(store: Path) -> Optional[Set[str]]:
    """Segment paths referenced by any snapshot directory of ``store``, or None if that cannot
    be known.

    Every directory with a ``MANIFEST.json`` counts, whatever its format version and even if
    its manifest is damaged (its shards may still be repaired or read); both kinds of shard
    manifest are read (:func:`fmt.segment_records`). None when a snapshot of a newer format
    has a shard manifest this version cannot read: its references are unknown, so nothing may
    be deleted.
    """
    refs: Set[str] = set()
    for entry in fmt.snapshot_dirs(store):
        for shard in entry.glob("rank-*.json"):
            try:  # a crafted FIFO or 100k-deep manifest must not hang or break the save
                data = read_json_verified(shard)
                refs.update(seg["file"] for seg in fmt.segment_records(data))
            except (OSError, ValueError, TypeError, KeyError, AttributeError, CorruptSnapshotError):
                if _written_by_newer_rla(entry):
                    return None
    return refs


def _written_by_newer_rla(snap: Path) -> bool:
    try:
        return fmt.is_newer(read_json_verified(snap / fmt.MANIFEST))
    except (OSError, ValueError, CorruptSnapshotError):
        return False


def collect_garbage(store: Path, rank: int, keep: Set[str]) -> int:
    """Delete this rank's segments no snapshot references (none when a newer RLA's snapshot
    cannot be read); drop stale staging dirs.

    Returns the number of deleted segment files.
    """
    refs = referenced_segments(store)
    seg_dir = store / fmt.segment_dir(rank)
    removed = 0
    if refs is not None and seg_dir.is_dir():
        refs |= keep
        for entry in seg_dir.iterdir():
            rel = f"{fmt.segment_dir(rank)}/{entry.name}"
            if rel not in refs:
                try:
                    entry.unlink()
                    removed += 1
                except OSError:
                    pass
    if rank == 0:
        clean_leftovers(store)
    return removed


def clean_leftovers(store: Path) -> None:
    """Remove what killed saves left: abandoned staging folders (staging.sweep), folders
    renamed away for deletion, and put back a snapshot an interrupted overwrite moved aside
    (``.replaced-<id>-*`` while ``<id>`` is missing), else delete it."""
    staging.sweep(store, fmt.STAGING_PREFIX)
    for entry in sorted(store.iterdir()):
        if entry.name.startswith(fmt.DELETING_PREFIX):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith(fmt.REPLACED_PREFIX):
            snap_id = entry.name[len(fmt.REPLACED_PREFIX) :].rsplit("-", 1)[0]
            target = store / snap_id
            try:
                if not os.path.lexists(target):
                    os.rename(entry, target)
                    fsync_dir(store)
                else:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                pass
