"""R-INC-1/2/3, R-MEM-2, R-CS-6: incremental cost, chain == full, retention and GC."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.snapshot.format import list_snapshots

from helpers import assert_same_state, fill, make

PIX = {"obs": ((3, 32, 32), "uint8"), "done": ((), "bool")}


def written_bytes() -> int:
    with open("/proc/self/io") as handle:
        for line in handle:
            if line.startswith("write_bytes"):
                return int(line.split()[1])
    raise AssertionError("no write_bytes")


def pixel_buffer(n: int, cap: int = 4000) -> ReplayBuffer:
    buf = ReplayBuffer(cap, PIX, segment_bytes=256 << 10, seed=0)
    rng = np.random.default_rng(0)
    buf.add({"obs": rng.integers(0, 255, (n, 3, 32, 32), dtype=np.uint8),
             "done": rng.random(n) < 0.01})
    return buf


def store_bytes(path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.mark.timeout(60)
def test_one_percent_append_writes_under_three_percent(tmp_path):
    buf = pixel_buffer(4000)
    buf.dumps(tmp_path / "s")
    full = store_bytes(tmp_path / "s")
    rng = np.random.default_rng(1)
    buf.add({"obs": rng.integers(0, 255, (40, 3, 32, 32), dtype=np.uint8),
             "done": np.zeros(40, bool)})
    os.sync()
    before = written_bytes()
    buf.dumps(tmp_path / "s")
    os.sync()
    delta = written_bytes() - before
    assert delta <= 0.03 * full, (delta, full)


@pytest.mark.timeout(60)
def test_chain_equals_full_after_overwrites_and_priority_updates(tmp_path):
    buf = make(sampler="prioritized")
    fill(buf, 20)
    buf.dumps(tmp_path / "chain")
    fill(buf, 30, seed=7)  # wraps the ring and updates old priorities
    buf.dumps(tmp_path / "chain")
    buf.dumps(tmp_path / "full", incremental=False)
    a, b = make(sampler="prioritized"), make(sampler="prioritized")
    a.loads(tmp_path / "chain")
    b.loads(tmp_path / "full")
    assert_same_state(a, b)
    assert_same_state(a, buf)


@pytest.mark.timeout(30)
def test_sparse_buffer_writes_only_valid_items(tmp_path):
    """R-MEM-2: a 1%-full buffer writes about 1% of its capacity."""
    buf = ReplayBuffer(100_000, {"obs": ((17,), "float32")}, seed=0)
    buf.add({"obs": np.ones((1000, 17), np.float32)})
    buf.dumps(tmp_path / "s")
    payload = 1000 * buf.schema.item_bytes
    seg_bytes = sum(f.stat().st_size for f in (tmp_path / "s" / "segments").rglob("*.seg"))
    # obs as is; env id (all 0), episode id (one episode), step (0-999) and flags narrowed
    # to 1, 1, 2 and 1 bytes
    assert seg_bytes == 1000 * (17 * 4 + 1 + 1 + 2 + 1) < payload
    assert store_bytes(tmp_path / "s") <= payload * 1.01 + 16384


@pytest.mark.timeout(60)
def test_keep_last_keeps_newest_and_collects_segments(tmp_path):
    buf = make()
    for i in range(5):
        fill(buf, 10, seed=i)
        buf.dumps(tmp_path / "s", keep_last=2)
    snaps = [s[2] for s in list_snapshots(tmp_path / "s")]
    assert snaps == ["snap-00000004", "snap-00000005"]
    # every remaining segment is referenced; loading both survivors works
    from RLA.replay_buffer.snapshot.retention import referenced_segments
    on_disk = {f"segments/r00000/{p.name}" for p in (tmp_path / "s/segments/r00000").iterdir()}
    assert on_disk == referenced_segments(tmp_path / "s")
    for snap in snaps:
        make().loads(tmp_path / "s", snapshot=snap)


@pytest.mark.timeout(30)
def test_segments_of_a_newer_rla_snapshot_are_never_collected(tmp_path):
    """An older RLA saving into a store shared with a newer one keeps the newer snapshot's
    segments; if it cannot even read that snapshot's shard manifest, it deletes nothing."""
    import json
    from RLA.replay_buffer.snapshot import format as fmt
    newer = make()
    fill(newer, 10)
    snap = newer.dumps(tmp_path / "s", snapshot_id="from-newer")
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["format_version"] = fmt.FORMAT_VERSION + 1
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    theirs = set((tmp_path / "s/segments/r00000").iterdir())
    ours = make(seed=3)
    fill(ours, 10, seed=7)
    ours.dumps(tmp_path / "s")
    assert theirs <= set((tmp_path / "s/segments/r00000").iterdir())
    shard = snap / "rank-00000.json"
    shard.write_text(shard.read_text().replace('"segments"', '"segments-v9"'))
    (snap / "rank-00000.json").write_text("{a newer layout")
    before = set((tmp_path / "s/segments/r00000").iterdir())
    fill(ours, 10, seed=8)
    ours.dumps(tmp_path / "s")  # some of its own older segments are now garbage: kept too
    assert before <= set((tmp_path / "s/segments/r00000").iterdir())


@pytest.mark.timeout(30)
def test_keep_last_ignores_incomplete_snapshots(tmp_path):
    buf = make()
    fill(buf, 5)
    buf.dumps(tmp_path / "s", keep_last=1)
    (tmp_path / "s" / "snap-00000009").mkdir()  # a directory without manifest
    (tmp_path / "s" / ".staging-snap-00000010-x").mkdir()
    fill(buf, 5)
    buf.dumps(tmp_path / "s", keep_last=1)
    assert [s[2] for s in list_snapshots(tmp_path / "s")] == ["snap-00000002"]
    with pytest.raises(ReplayBufferError, match="keep_last must be at least 1"):
        buf.dumps(tmp_path / "s", keep_last=0)
    assert [s[2] for s in list_snapshots(tmp_path / "s")] == ["snap-00000002"]


@pytest.mark.timeout(30)
def test_existing_snapshot_id_is_not_overwritten_by_default(tmp_path):
    buf = make()
    fill(buf, 5)
    buf.dumps(tmp_path / "s", snapshot_id="step-10")
    with pytest.raises(ReplayBufferError, match="already exists"):
        buf.dumps(tmp_path / "s", snapshot_id="step-10")
    fill(buf, 5)
    buf.dumps(tmp_path / "s", snapshot_id="step-10", overwrite=True)
    other = make()
    other.loads(tmp_path / "s", snapshot="step-10")
    assert_same_state(buf, other)


@pytest.mark.timeout(30)
def test_keep_last_does_not_count_a_damaged_snapshot(tmp_path):
    """A snapshot with a truncated segment is not one of the kept ones: the intact older one
    survives keep_last=2 next to the new one; the damaged one is left for inspection."""
    buf = make(segment_bytes=1 << 20)
    fill(buf, 10)
    buf.dumps(tmp_path / "s", incremental=False)  # snap 1, intact
    fill(buf, 10, seed=3)
    damaged = buf.dumps(tmp_path / "s", incremental=False)  # snap 2, its own segment
    seg = json.loads((damaged / "rank-00000.json").read_text())["segments"][0]["file"]
    with open(tmp_path / "s" / seg, "r+b") as handle:
        handle.truncate(10)
    fill(buf, 10, seed=4)
    buf.dumps(tmp_path / "s", keep_last=2, incremental=False)
    assert [s[2] for s in list_snapshots(tmp_path / "s")] == \
        ["snap-00000001", "snap-00000002", "snap-00000003"]
    make().loads(tmp_path / "s", snapshot="snap-00000001")
    fill(buf, 10, seed=5)
    buf.dumps(tmp_path / "s", keep_last=2, incremental=False)  # 3 and 4 now: 1 and 2 go
    assert [s[2] for s in list_snapshots(tmp_path / "s")] == ["snap-00000003", "snap-00000004"]
