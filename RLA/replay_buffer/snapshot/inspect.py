"""Read-only views of a snapshot: a summary without loading payloads, and full verification."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from RLA.replay_buffer.schema import Schema
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.segment_layout import check_widens, chunk_layout
from RLA.replay_buffer.snapshot.shard_io import segment_fields


def describe(path: Any, snapshot: Optional[str] = None) -> Dict[str, Any]:
    """Manifest, shards, schema, counts, episode classes and sizes (no payload is read)."""
    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    shards = validate.read_shards(snap_dir, manifest)
    rows = []
    total = 0
    for rank in sorted(shards):
        shard = shards[rank]
        files = [s["bytes"] for s in fmt.segment_records(shard)]
        files += [a["bytes"] for a in shard.get("arrays", {}).values()]
        total += sum(files)
        rows.append(
            {
                "rank": rank,
                "size": shard.get("size", len(shard.get("trajectories", []))),
                "capacity": shard.get("capacity"),
                "cursor": shard.get("cursor"),
                "sampler": (shard.get("sampler") or {}).get("kind"),
                "num_envs": (shard.get("episodes") or {}).get("num_envs"),
                "bytes": sum(files),
                "files": len(files),
            }
        )
    first = shards[min(shards)] if shards else {}
    snapshots, newer, _ = fmt.scan(store)
    return {
        "store": str(store),
        "snapshot": snap_dir.name,
        "kind": manifest.get("kind"),
        "format_version": manifest.get("format_version"),
        "library_version": manifest.get("library_version"),
        "world_size": manifest.get("world_size"),
        "created": manifest.get("created"),
        "schema": first.get("schema"),
        "episode_report": manifest.get("episode_report"),
        "provenance": manifest.get("provenance"),
        "shards": rows,
        "payload_bytes": total,
        "snapshots": [s[2] for s in snapshots],
        "newer_snapshots": [name for _, name in newer],
    }


def verify(path: Any, snapshot: Optional[str] = None, direct_reads: Optional[bool] = None) -> Dict[str, int]:
    """Re-hash every file of the snapshot and check every segment against the schema (layout,
    narrowed integers widening within their type); raises ``CorruptSnapshotError`` on any
    mismatch. ``direct_reads`` as for :meth:`ReplayBuffer.loads`."""
    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    shards = validate.read_shards(snap_dir, manifest)
    files = nbytes = 0
    for rank in sorted(shards):
        shard = shards[rank]
        fields = (
            segment_fields(Schema.from_json(shard["schema"]), shard.get("segment_fields"))
            if shard.get("segments") and shard.get("schema")
            else []
        )
        for seg in fmt.segment_records(shard):
            path = store / seg["file"]
            layout = chunk_layout(seg, fields, path) if fields and "start" in seg else []
            buf = np.empty(seg["bytes"], dtype=np.uint8)
            fio.read_verified(path, [fio.as_bytes_view(buf)], seg["bytes"], seg["crc32"], direct=direct_reads)
            n = seg.get("end", 0) - seg.get("start", 0)
            for f, (off, dtype, base) in zip(fields, layout):
                if base is not None:  # a narrowed chunk widens back within its field's type
                    count = n * int(np.prod(f.shape, dtype=np.int64))
                    check_widens(buf[off : off + count * dtype.itemsize].view(dtype), base, f.dtype, path)
            files, nbytes = files + 1, nbytes + seg["bytes"]
        for meta in shard.get("arrays", {}).values():
            buf = np.empty(meta["bytes"], dtype=np.uint8)
            view = [fio.as_bytes_view(buf)]
            fio.read_verified(
                snap_dir / meta["file"], view, meta["bytes"], meta["crc32"], direct=direct_reads
            )
            files, nbytes = files + 1, nbytes + meta["bytes"]
    return {"files": files + len(shards) + 1, "bytes": nbytes}
