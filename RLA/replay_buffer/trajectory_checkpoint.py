"""The checkpoint segments of ``TrajectoryReplayBuffer``: one verified file per trajectory.

Writing reuses a trajectory's segment from an earlier checkpoint of the store when it is
still there; reading verifies every file (size, CRC-32) before the buffer changes, and can
take one rank's balanced share of the trajectories.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.episodes import episode_counter
from RLA.replay_buffer.schema import dtype_from_json, dtype_to_json
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate

KIND = "TrajectoryReplayBuffer"
Entry = Dict[str, Any]


def write_segments(
    store: Path,
    rank: int,
    entries: List[Entry],
    known: Dict[int, Dict[str, Any]],
    written: List[Path],
    trajectory: Callable[[Entry], Dict[str, np.ndarray]],
) -> Dict[int, Dict[str, Any]]:
    """Write (or reuse from ``known``) one segment per index entry and set each entry's
    ``segment``; returns the records by id. ``written`` collects the new files, fsynced."""
    seg_rel = fmt.segment_dir(rank)
    (store / seg_rel).mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:6]  # never rewrite a file an earlier snapshot may list
    records = {}
    for entry in entries:
        rec = known.get(entry["id"])
        if rec is None or not (store / rec["file"]).exists():
            data = trajectory(entry)
            names = sorted(data)
            rel = f"{seg_rel}/traj-{entry['id']}-{entry['uuid'][:8]}-{token}.seg"
            nbytes, crc = fio.write_views(store / rel, [fio.as_bytes_view(data[n]) for n in names])
            written.append(store / rel)
            rec = {
                "file": rel,
                "bytes": nbytes,
                "crc32": crc,
                "fields": [
                    {"name": n, "dtype": dtype_to_json(data[n].dtype), "shape": list(data[n].shape)}
                    for n in names
                ],
            }
        records[entry["id"]] = rec
        entry["segment"] = rec
    fio.fsync_paths(written)
    return records


def balanced_share(entries: List[Entry], rank: int, world_size: int) -> List[Entry]:
    """Rank ``rank``'s trajectories: each (in order) to the rank with the fewest steps so far."""
    loads = np.zeros(world_size, dtype=np.int64)
    mine = []
    for e in entries:
        r = int(np.argmin(loads))
        loads[r] += e["length"]
        if r == rank:
            mine.append(e)
    return mine


@dataclass
class Checkpoint:
    """A trajectory checkpoint read and verified: its shards, the entries loaded (in id
    order) with their arrays, and the episode counter to continue from."""

    snap_dir: Path
    shards: Dict[int, Dict[str, Any]]
    entries: List[Entry]
    data: Dict[int, Dict[str, np.ndarray]]
    next_counter: int


def _read_segment(store: Path, seg: Dict[str, Any]) -> Dict[str, np.ndarray]:
    arrays = {
        f["name"]: np.empty(tuple(f["shape"]), dtype=dtype_from_json(f["dtype"])) for f in seg["fields"]
    }
    views = [fio.as_bytes_view(arrays[f["name"]]) for f in seg["fields"]]
    fio.read_verified(store / seg["file"], views, seg["bytes"], seg["crc32"])
    return arrays


def read_checkpoint(load_path: Any, share: Optional[Tuple[int, int]] = None) -> Checkpoint:
    """Read the newest (or the named) trajectory checkpoint; ``share`` = (rank, world_size)
    keeps that rank's balanced share.

    Raises:
        ReplayBufferError: the snapshot is not a trajectory checkpoint.
        CorruptSnapshotError: a file fails verification.
    """
    store, snap_dir, manifest = fmt.resolve(load_path)
    if manifest.get("kind") != KIND:
        raise ReplayBufferError(
            f"{snap_dir} is not a trajectory checkpoint",
            expected=KIND,
            found=repr(manifest.get("kind")),
            fix="load it with ReplayBuffer.loads",
        )
    shards = validate.read_shards(snap_dir, manifest)
    entries = [e for r in sorted(shards) for e in shards[r]["trajectories"]]
    entries.sort(key=lambda e: (int(episode_counter(e["id"])), e["id"]))
    if share is not None:
        entries = balanced_share(entries, *share)
    data = {e["id"]: _read_segment(store, e["segment"]) for e in entries}
    counter = max(
        [int(s.get("next_counter", 0)) for s in shards.values()]
        + [int(episode_counter(e["id"])) + 1 for e in entries]
        + [0]
    )
    return Checkpoint(snap_dir, shards, entries, data, counter)
