"""R-CS-2/3/8 and R-RT-6: bad snapshots raise specific errors naming the file; the live
buffer is left untouched."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.replay_buffer import ReplayBuffer

from helpers import assert_same_state, fill, make


@pytest.fixture()
def saved(tmp_path):
    src = make(sampler="prioritized")
    fill(src, 20)
    snap = src.dumps(tmp_path / "store")
    live = make(sampler="prioritized", seed=5)
    fill(live, 7, seed=11)
    reference = make(sampler="prioritized", seed=5)
    fill(reference, 7, seed=11)
    return tmp_path / "store", snap, live, reference


def segment_files(store: Path):
    return sorted((store / "segments" / "r00000").iterdir())


def check_untouched(live, reference):
    assert_same_state(live, reference)
    assert np.array_equal(live.sample(4)[1], reference.sample(4)[1])


@pytest.mark.timeout(30)
def test_truncated_segment(saved):
    store, _, live, ref = saved
    seg = segment_files(store)[2]
    seg.write_bytes(seg.read_bytes()[:-3])
    with pytest.raises(CorruptSnapshotError, match=f"{seg.name}.*wrong size"):
        live.loads(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_missing_segment(saved):
    store, _, live, ref = saved
    seg = segment_files(store)[0]
    seg.unlink()
    with pytest.raises(CorruptSnapshotError, match=f"{seg.name} is missing"):
        live.loads(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_flipped_byte(saved):
    store, _, live, ref = saved
    seg = segment_files(store)[1]
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0x40
    seg.write_bytes(bytes(data))
    with pytest.raises(CorruptSnapshotError, match=f"{seg.name} fails its checksum"):
        live.loads(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_flipped_priority_array(saved):
    store, snap, live, ref = saved
    arr = snap / "rank-00000" / "priority.bin"
    data = bytearray(arr.read_bytes())
    data[0] ^= 1
    arr.write_bytes(bytes(data))
    with pytest.raises(CorruptSnapshotError, match="priority.bin fails its checksum"):
        live.loads(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_extra_file_only_warns(saved):
    store, snap, live, _ = saved
    (snap / "stray.txt").write_text("hello")
    with pytest.warns(UserWarning, match="stray.txt"):
        live.loads(store)
    assert len(live) == 40


@pytest.mark.timeout(30)
def test_manifest_and_segments_disagree(saved):
    store, snap, live, ref = saved
    shard = snap / "rank-00000.json"
    data = json.loads(shard.read_text())
    data["size"] += 1
    text = json.dumps(data)
    shard.write_text(text)
    with pytest.raises(CorruptSnapshotError, match="rank-00000.json"):
        live.loads(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_bad_manifest_json(saved):
    store, snap, live, ref = saved
    (snap / "MANIFEST.json").write_text("{not json")
    with pytest.raises(CorruptSnapshotError, match="MANIFEST.json is not valid JSON"):
        live.loads(snap)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_newer_format_is_rejected(saved):
    store, snap, live, ref = saved
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["format_version"] = 99
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptSnapshotError, match="format version 99.*upgrade RLA"):
        live.loads(snap)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_schema_mismatch(saved):
    store, _, _, _ = saved
    other = ReplayBuffer(64, {"y": ((2,), "float64")}, num_envs=2)
    with pytest.raises(ReplayBufferError, match="schema .* differs"):
        other.loads(store)
    assert len(other) == 0


@pytest.mark.timeout(30)
def test_capacity_mismatch(saved):
    store, _, _, _ = saved
    other = make(capacity=32, sampler="prioritized")
    with pytest.raises(ReplayBufferError, match="capacity .* differs.*Expected: 32. Found: 64"):
        other.loads(store)
    assert len(other) == 0


@pytest.mark.timeout(30)
def test_sampler_mismatch(saved):
    store, _, _, _ = saved
    other = make(sampler="uniform")
    with pytest.raises(ReplayBufferError, match="sampler .* differs"):
        other.loads(store)


@pytest.mark.timeout(30)
def test_missing_shard(tmp_path):
    bufs = [make(rank=r, world_size=2) for r in range(2)]
    for b in bufs:
        fill(b, 6, seed=b.rank)
    import threading
    threads = [threading.Thread(target=b.dumps, args=(tmp_path / "s",),
                                kwargs={"barrier": "file", "barrier_timeout": 20}) for b in bufs]
    [t.start() for t in threads]
    [t.join() for t in threads]
    snap = next(p for p in (tmp_path / "s").iterdir() if p.name.startswith("snap-"))
    (snap / "rank-00001.json").unlink()
    live = make(rank=0, world_size=2)
    with pytest.raises(CorruptSnapshotError, match="rank-00001.json is missing.*allow_missing"):
        live.loads(tmp_path / "s")
    assert len(live) == 0
    with pytest.warns(UserWarning, match="rank-00001.json is missing"):
        rep = live.loads(tmp_path / "s", allow_missing_shards=True, rank=0, world_size=1)
    assert rep["mode"] == "resharded" and rep["source_world_size"] == 1 and len(live) == 12


@pytest.mark.timeout(30)
def test_not_a_store(tmp_path):
    with pytest.raises(ReplayBufferError, match="No replay snapshot store"):
        make().loads(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReplayBufferError, match="No complete snapshot"):
        make().loads(tmp_path / "empty")


@pytest.mark.timeout(30)
def test_wrong_batch_is_rejected_and_buffer_unchanged():
    buf = make()
    fill(buf, 3)
    before = buf.write_count
    with pytest.raises(ReplayBufferError, match="do not match the buffer schema.*missing \\['tag'\\]"):
        buf.add({"obs": np.zeros((2, 3)), "next": {"obs": np.zeros((2, 3))},
                 "act": np.zeros(2, int), "done": np.zeros(2, bool)}, env_ids=[0, 1])
    with pytest.raises(ReplayBufferError, match="wrong shape"):
        buf.add({"obs": np.zeros((2, 4)), "next": {"obs": np.zeros((2, 3))},
                 "act": np.zeros(2, int), "done": np.zeros(2, bool),
                 "tag": np.array(["a", "b"])}, env_ids=[0, 1])
    with pytest.raises(ReplayBufferError, match="env_ids out of range"):
        fill_bad = {"obs": np.zeros((1, 3)), "next": {"obs": np.zeros((1, 3))},
                    "act": np.zeros(1, int), "done": np.zeros(1, bool), "tag": np.array(["a"])}
        buf.add(fill_bad, env_ids=[5])
    assert buf.write_count == before


@pytest.mark.timeout(30)
def test_full_disk_is_refused_before_writing_and_old_snapshot_stays(tmp_path, monkeypatch):
    """R-CS-5: the free-space check fails the save early; nothing is published or left."""
    import collections
    from RLA.replay_buffer.snapshot import shard_io
    buf = make()
    fill(buf, 10)
    buf.dumps(tmp_path / "s")
    fill(buf, 10, seed=4)
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shard_io.shutil, "disk_usage", lambda p: usage(10, 10, 0))
    with pytest.raises(ReplayBufferError, match="Not enough free disk space"):
        buf.dumps(tmp_path / "s")
    assert [p.name for p in (tmp_path / "s").iterdir() if not p.name.startswith("seg")] == \
        ["snap-00000001"]
    monkeypatch.undo()
    other = make()
    other.loads(tmp_path / "s")
    assert len(other) == 20


def test_checksum_is_zlibs_crc32_and_accelerated_where_rla_installs_isal():
    """Files are signed with zlib's CRC-32 whatever computes it; setup.py installs isal on
    these machines, so a default install checks files at the benchmarked speed."""
    import platform
    import zlib

    from RLA.replay_buffer.snapshot import file_io as fio
    name, fn = fio.crc32_impl()
    data = np.random.default_rng(0).bytes(1 << 20)
    assert fn(data) == zlib.crc32(data) and fn(data[7:], fn(data[:7])) == zlib.crc32(data)
    if platform.machine() in ("x86_64", "AMD64", "aarch64", "arm64"):
        assert name == "isal"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("edit", ["size", "episodes"])
def test_manifest_numbers_that_disagree_with_the_shards_are_caught(saved, edit):
    """MANIFEST.json repeats each shard's size and the episode counts: an edit is an error on
    load, inspect and verify, and the live buffer stays as it was."""
    from RLA.replay_buffer.snapshot import inspect as snap_inspect
    store, snap, live, ref = saved
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    if edit == "size":
        manifest["shards"][0]["size"] -= 1
    else:
        manifest["episode_report"]["complete"]["steps"] += 5
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    for action in (live.loads, snap_inspect.describe, snap_inspect.verify):
        with pytest.raises(CorruptSnapshotError, match="disagrees with its shard manifests"):
            action(store)
    check_untouched(live, ref)


@pytest.mark.timeout(30)
def test_capacity_mismatch_fix_is_a_way_that_works(saved):
    """The error's fix (episode_policy={}) loads the snapshot into the smaller buffer, the
    oldest episodes dropped and counted."""
    store, _, _, _ = saved
    other = make(capacity=32, sampler="prioritized")
    with pytest.raises(ReplayBufferError) as info:
        other.loads(store)
    assert "episode_policy={}" in info.value.fix
    report = other.loads(store, episode_policy={})
    assert 0 < len(other) <= 32 and report["report"]["overflow"]["episodes"] > 0
