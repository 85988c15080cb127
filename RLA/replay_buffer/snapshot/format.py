"""The on-disk snapshot format: names, versions and manifests (file I/O: file_io.py).

A *store* directory holds immutable segments shared by its snapshots and one directory per
published snapshot::

    <store>/segments/r<rank>/c<chunk>-<session>-<version>.seg   immutable, never rewritten
    <store>/<snapshot_id>/MANIFEST.json                          written last (global)
    <store>/<snapshot_id>/rank-<rank>.json                       one shard manifest per rank
    <store>/<snapshot_id>/rank-<rank>/<array>.bin                small per-shard arrays
    <store>/.staging-<snapshot_id>-<token>/                      a save in progress

A snapshot becomes visible only when its staging directory is renamed to ``<snapshot_id>``
after every file (and MANIFEST.json last) was fsync'd. Every file is listed with its size and
CRC-32; no file is ever unpickled. Inside a segment file, see segment_layout.py.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.replay_buffer.snapshot.file_io import read_json_verified
from RLA.safe_paths import is_plain_name

FORMAT = "rla-replay-snapshot"
#: 3: narrowed integer chunks; 2: padded segment layout (field offsets). 1 and 2 are still read.
FORMAT_VERSION = 3
MANIFEST = "MANIFEST.json"
SEGMENTS = "segments"
STAGING_PREFIX = ".staging-"
#: A snapshot an overwrite moved aside (put back by the next save if the new one is missing).
REPLACED_PREFIX = ".replaced-"
#: A folder renamed away to be deleted (no longer a snapshot).
DELETING_PREFIX = ".deleting-"
#: Field chunks of at least this many bytes start, in a format 2 segment file, at an offset
#: congruent to their destination in a page-aligned array (mod ALIGN_TO), so a cold load can
#: read them in place with O_DIRECT (see direct_read.py).
ALIGN_MIN_BYTES = 64 << 10
ALIGN_TO = 4096


def shard_file(rank: int) -> str:
    return f"rank-{rank:05d}.json"


def shard_dir(rank: int) -> str:
    return f"rank-{rank:05d}"


def segment_dir(rank: int) -> str:
    return f"{SEGMENTS}/r{rank:05d}"


def read_manifest(snap_dir: Path) -> Dict[str, Any]:
    """Read and version-check ``<snap_dir>/MANIFEST.json``."""
    return _checked(snap_dir, read_json_verified(snap_dir / MANIFEST))


def _checked(snap_dir: Path, manifest: Any) -> Dict[str, Any]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CorruptSnapshotError(
            f"{snap_dir / MANIFEST} is not an RLA replay snapshot manifest",
            expected=f"format {FORMAT!r}",
            found=repr(manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__),
            fix="point at a directory written by ReplayBuffer.dumps",
        )
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CorruptSnapshotError(
            f"{snap_dir / MANIFEST} uses snapshot format version {version!r}",
            expected=f"format_version <= {FORMAT_VERSION}",
            found=repr(version),
            fix="upgrade RLA to read snapshots written by a newer version",
        )
    return manifest


def is_newer(manifest: Any) -> bool:
    """True for a manifest written by a newer RLA (a format this version cannot read)."""
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    return isinstance(version, int) and version > FORMAT_VERSION


def snapshot_dirs(store: Path) -> List[Path]:
    """Every directory of ``store`` that holds a ``MANIFEST.json`` (readable or not)."""
    if not store.is_dir():
        return []
    return [
        entry
        for entry in store.iterdir()
        if not entry.name.startswith(".")
        and entry.name != SEGMENTS
        and _plain_dir(entry)
        and (entry / MANIFEST).is_file()
    ]


def _plain_dir(path: Path) -> bool:
    """A directory that is not a symbolic link (links in a store are never followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def scan(
    store: Path,
) -> Tuple[List[Tuple[int, float, str, Path]], List[Tuple[int, str]], Dict[str, Dict[str, Any]]]:
    """Read every manifest of ``store`` once: the readable snapshots oldest first (see
    :func:`list_snapshots`), a newer RLA's ones as ``(seq, id)`` oldest first, and the
    readable manifests by id."""
    found, newer, manifests = [], [], {}
    for entry in snapshot_dirs(store):
        try:
            manifest = read_json_verified(entry / MANIFEST)
            if is_newer(manifest):
                newer.append((int(manifest.get("seq", 0)), entry.name))
                continue
            manifest = _checked(entry, manifest)
            found.append(
                (int(manifest.get("seq", 0)), float(manifest.get("created", 0.0)), entry.name, entry)
            )
        except (CorruptSnapshotError, TypeError, ValueError):
            continue
        manifests[entry.name] = manifest
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return found, sorted(newer), manifests


def list_snapshots(store: Path) -> List[Tuple[int, float, str, Path]]:
    """Published snapshots of ``store`` whose manifest parses, oldest first.

    Returns ``(seq, created, id, path)`` tuples; unreadable ones are skipped here (loading
    one explicitly reports why; :func:`scan` also lists a newer RLA's ones).
    """
    return scan(store)[0]


def segment_records(shard: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The segment files a shard manifest lists (``file``, ``bytes``, ``crc32``...): a
    ReplayBuffer's ``segments`` and a TrajectoryReplayBuffer's trajectory segments."""
    return list(shard.get("segments", [])) + [t["segment"] for t in shard.get("trajectories", [])]


def total_episode_report(shards: Iterable[Dict[str, Any]]) -> Dict[str, Dict[str, int]]:
    """The shards' episode counts summed per class (what MANIFEST.json records)."""
    from RLA.replay_buffer.episodes import CLASSES

    total = {c: {"episodes": 0, "steps": 0} for c in CLASSES}
    for shard in shards:
        for cls, counts in (shard.get("episode_report") or {}).items():
            for key in ("episodes", "steps"):
                total.setdefault(cls, {"episodes": 0, "steps": 0})[key] += counts[key]
    return total


def resolve(path: Any, snapshot: Optional[str] = None) -> Tuple[Path, Path, Dict[str, Any]]:
    """Find ``(store, snapshot dir, manifest)`` from a store or a snapshot directory."""
    path = Path(path)
    if (path / MANIFEST).is_file() and snapshot is None:
        return path.parent, path, read_manifest(path)
    if not path.is_dir():
        raise ReplayBufferError(
            f"No replay snapshot store at {path}",
            expected="a directory written by dumps()",
            found="nothing there",
            fix="check the path",
        )
    if snapshot is not None:
        snap = path / snapshot
        if not is_plain_name(snapshot) or not _plain_dir(snap) or not (snap / MANIFEST).is_file():
            raise ReplayBufferError(
                f"No snapshot {snapshot!r} in {path}",
                expected=f"one of {[s[2] for s in list_snapshots(path)]}",
                found="no such published snapshot",
                fix="pick an existing snapshot id",
            )
        return path, snap, read_manifest(snap)
    snaps, newer, manifests = scan(path)
    unreadable = sorted(snapshot_dirs(path))
    if not snaps and unreadable:
        read_manifest(unreadable[-1])  # raises why the newest one cannot be read
    if not snaps:
        raise ReplayBufferError(
            f"No complete snapshot in {path}",
            expected="a published snapshot (a directory with MANIFEST.json)",
            found=f"{sorted(p.name for p in path.iterdir())[:8]}",
            fix="save one with dumps() first",
        )
    seq, _, snap_id, snap = snaps[-1]
    skipped = [name for newer_seq, name in newer if newer_seq > seq]
    if skipped:
        warnings.warn(
            f"replay store {path}: newer snapshot(s) {skipped} were written by a "
            f"newer RLA (format > {FORMAT_VERSION}) and are skipped; loading "
            f"{snap_id} (upgrade RLA to load them)",
            stacklevel=3,
        )
    return path, snap, manifests[snap_id]
