"""Hostile snapshot manifests beyond shapes and names: FIFOs, deep or huge JSON, a file listed
twice, bad episode/sampler/RNG state. Each is one CorruptSnapshotError for every reader
(``loads``, ``verify``, ``inspect``, reshard, ``build_from_snapshot``) and never hangs a reader or
the next save of the store."""
from __future__ import annotations

import copy
import json
import os
import threading
import zlib
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer.run_snapshots import build_from_snapshot
from RLA.replay_buffer.sharding import reshard_snapshot
from RLA.replay_buffer.snapshot.inspect import describe, verify

from helpers import fill, make

READERS = {
    "loads": lambda store, tmp: make(sampler="prioritized").loads(store),
    "verify": lambda store, tmp: verify(store),
    "inspect": lambda store, tmp: describe(store),
    "reshard": lambda store, tmp: reshard_snapshot(store, tmp / "out", 2),
    "build": lambda store, tmp: build_from_snapshot(store),
}


@pytest.fixture()
def saved(tmp_path):
    buf = make(sampler="prioritized")
    fill(buf, 20)
    snap = buf.dumps(tmp_path / "store")
    return tmp_path / "store", Path(snap)


def resign(snap: Path, data: bytes, rank: int = 0) -> None:
    """Write shard ``rank``'s manifest bytes and list their size and CRC in MANIFEST.json."""
    (snap / f"rank-{rank:05d}.json").write_bytes(data)
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    for entry in manifest["shards"]:
        if entry["rank"] == rank:
            entry.update(bytes=len(data), crc32=zlib.crc32(data))
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))


def tamper(snap: Path, edit: Callable[[Dict[str, Any]], None]) -> None:
    """A consistent forgery of shard 0: only the manifest checks can refuse it."""
    shard = json.loads((snap / "rank-00000.json").read_text())
    edit(shard)
    resign(snap, json.dumps(shard).encode())


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """Run ``call`` in a daemon thread; fail (instead of hanging) when it does not return."""
    out: Dict[str, Any] = {}

    def go() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader hangs"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def save_again(store: Path) -> None:
    buf = make(sampler="prioritized")
    fill(buf, 3)
    buf.dumps(store)


def loaded_size(store: Path) -> int:
    buf = make(sampler="prioritized")
    buf.loads(store)
    return len(buf)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fifo_shard_manifest_is_refused_without_blocking(saved, tmp_path, reader):
    store, snap = saved
    (snap / "rank-00000.json").unlink()
    os.mkfifo(snap / "rank-00000.json")
    with pytest.raises(CorruptSnapshotError, match="FIFO"):
        within(10, lambda: READERS[reader](store, tmp_path))


@pytest.mark.timeout(60)
def test_a_fifo_shard_manifest_does_not_hang_the_next_save(saved):
    store, snap = saved
    (snap / "rank-00000.json").unlink()
    os.mkfifo(snap / "rank-00000.json")
    within(20, lambda: save_again(store))
    assert loaded_size(store) == 6  # the new snapshot: 3 steps of 2 envs


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_deeply_nested_shard_manifest_is_a_corrupt_snapshot(saved, tmp_path, reader):
    store, snap = saved
    data = (snap / "rank-00000.json").read_bytes()
    resign(snap, data[:-1] + b', "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with pytest.raises(CorruptSnapshotError, match="nested more than"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
def test_a_deeply_nested_shard_manifest_does_not_break_the_next_save(saved):
    store, snap = saved
    data = (snap / "rank-00000.json").read_bytes()
    resign(snap, data[:-1] + b', "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    save_again(store)  # retention reads every shard manifest of the store
    assert loaded_size(store) == 6


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", ["loads", "verify"])
def test_a_deeply_nested_top_manifest_is_a_corrupt_snapshot(saved, tmp_path, reader):
    store, snap = saved
    (snap / "MANIFEST.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(Exception) as info:
        READERS[reader](store, tmp_path)
    assert not isinstance(info.value, RecursionError)
    assert "RecursionError" not in repr(info.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", ["loads", "verify", "build"])
def test_an_oversized_top_manifest_is_refused_before_it_is_read(saved, tmp_path, reader, monkeypatch):
    from RLA.replay_buffer.snapshot import file_io

    store, snap = saved
    monkeypatch.setattr(file_io, "MAX_MANIFEST_BYTES", 4096)
    with open(snap / "MANIFEST.json", "ab") as handle:
        handle.write(b" " * 8192)
    with pytest.raises(Exception, match="at most 4096 are read"):
        READERS[reader](store, tmp_path)


def _same_file_twice(shard: Dict[str, Any]) -> None:
    """Segment 1 becomes a second listing of segment 0's file (same length and checksum)."""
    first, second = shard["segments"][0], shard["segments"][1]
    length = first["end"] - first["start"]
    assert second["end"] - second["start"] == length
    shard["segments"][1] = dict(copy.deepcopy(first), start=second["start"], end=second["end"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_segment_file_listed_twice_is_refused(saved, tmp_path, reader):
    store, snap = saved
    tamper(snap, _same_file_twice)
    with pytest.raises(CorruptSnapshotError, match="listed twice"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("edit, match", [
    (lambda s: s["episodes"].update(current=["x"] * len(s["episodes"]["current"])), "episodes.current"),
    (lambda s: s["episodes"].update(current=[-7] * len(s["episodes"]["current"])), "episodes.current"),
    (lambda s: s["episodes"].update(step=[10 ** 30] * len(s["episodes"]["step"])), "episodes.step"),
    (lambda s: s["episodes"].update(step=[1.5] * len(s["episodes"]["step"])), "episodes.step"),
    (lambda s: s["episodes"].update(next_counter="3"), "episodes.next_counter"),
    (lambda s: s["sampler"].pop("params"), "sampler"),
    (lambda s: s["sampler"].update(kind=7), "sampler"),
    (lambda s: s["sampler"]["params"].update(alpha=float("nan")), "sampler"),
    (lambda s: s["sampler"]["params"].update(nonsense=1), "sampler"),
    (lambda s: s["sampler"]["state"].update(max_priority="high"), "sampler"),
    (lambda s: s["sampler"]["state"].update(max_priority=float("inf")), "sampler"),
    (lambda s: s.update(rng={"bit_generator": "PCG64", "state": "x"}), "rng"),
])
def test_bad_episode_sampler_or_rng_state_is_refused_by_every_reader(saved, tmp_path, reader, edit, match):
    """verify said OK on what loads then failed with ValueError, OverflowError or KeyError."""
    store, snap = saved
    tamper(snap, edit)
    with pytest.raises(CorruptSnapshotError, match=match):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
def test_build_from_snapshot_refuses_a_shard_file_outside_the_snapshot(saved, tmp_path):
    """It read the shard manifest the top manifest named, without the name check."""
    store, snap = saved
    (store / "planted.json").write_bytes((snap / "rank-00000.json").read_bytes())
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["shards"][0]["file"] = "../planted.json"
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptSnapshotError, match="is refused"):
        build_from_snapshot(store)
