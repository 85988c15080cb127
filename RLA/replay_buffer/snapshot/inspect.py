"""Read-only views of a snapshot: a summary without loading payloads, and full verification."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from RLA.replay_buffer.schema import Schema
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot.segment_layout import segment_spans, stored_dtypes
from RLA.replay_buffer.snapshot.shard_io import segment_fields


def describe(path: Any, snapshot: Optional[str] = None) -> Dict[str, Any]:
    """Manifest, shards, schema, counts, episode classes and sizes (no payload is read)."""
    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    shards = fmt.read_shards(snap_dir, manifest)
    rows = []
    total = 0
    for rank in sorted(shards):
        shard = shards[rank]
        files = [s["bytes"] for s in shard.get("segments", [])]
        files += [t["segment"]["bytes"] for t in shard.get("trajectories", [])]
        files += [a["bytes"] for a in shard.get("arrays", {}).values()]
        total += sum(files)
        rows.append({"rank": rank, "size": shard.get("size", len(shard.get("trajectories", []))),
                     "capacity": shard.get("capacity"), "cursor": shard.get("cursor"),
                     "sampler": (shard.get("sampler") or {}).get("kind"), "bytes": sum(files),
                     "files": len(files)})
    first = shards[min(shards)] if shards else {}
    return {"store": str(store), "snapshot": snap_dir.name, "kind": manifest.get("kind"),
            "format_version": manifest.get("format_version"),
            "library_version": manifest.get("library_version"),
            "world_size": manifest.get("world_size"), "created": manifest.get("created"),
            "schema": first.get("schema"), "episode_report": manifest.get("episode_report"),
            "provenance": manifest.get("provenance"), "shards": rows, "payload_bytes": total,
            "snapshots": [s[2] for s in fmt.list_snapshots(store)]}


def verify(path: Any, snapshot: Optional[str] = None) -> Dict[str, int]:
    """Check every segment's layout against the schema and re-hash every file of the snapshot;
    raises ``CorruptSnapshotError`` on any mismatch."""
    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    shards = fmt.read_shards(snap_dir, manifest)
    files = nbytes = 0
    for rank in sorted(shards):
        shard = shards[rank]
        entries: List[Dict[str, Any]] = list(shard.get("segments", []))
        if entries and shard.get("schema"):  # each segment's layout matches the schema
            fields = segment_fields(Schema.from_json(shard["schema"]), shard.get("segment_fields"))
            for seg in entries:
                path = store / seg["file"]
                segment_spans(seg, fields, path, stored_dtypes(seg, fields, path))
        entries += [t["segment"] for t in shard.get("trajectories", [])]
        for seg in entries:
            buf = np.empty(seg["bytes"], dtype=np.uint8)
            fio.read_verified(store / seg["file"], [fio.as_bytes_view(buf)], seg["bytes"],
                              seg["crc32"])
            files, nbytes = files + 1, nbytes + seg["bytes"]
        for meta in shard.get("arrays", {}).values():
            buf = np.empty(meta["bytes"], dtype=np.uint8)
            fio.read_verified(snap_dir / meta["file"], [fio.as_bytes_view(buf)], meta["bytes"],
                              meta["crc32"])
            files, nbytes = files + 1, nbytes + meta["bytes"]
    return {"files": files + len(shards) + 1, "bytes": nbytes}
