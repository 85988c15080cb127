"""Snapshots of an older format keep loading, verify, reshard and take incremental saves.

``data/format1-small`` was written by RLA's format 1 (segments without padding, before format 2
lined large chunks up for O_DIRECT); ``data/format2-small`` by format 2 (a padded segment, and
integer chunks stored at full width, before format 3 narrowed them)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import inspect as snap_inspect

from helpers import assert_same_state, fill, make, multiset
from test_direct_reads import evict

DATA = Path(__file__).parent / "data"
FORMAT1 = DATA / "format1-small"
FORMAT2 = DATA / "format2-small"


def original():
    """The buffer the format 1 fixture was saved from (same builder, seeds and steps)."""
    buf = make(capacity=64, sampler="prioritized", seed=5, segment_bytes=512)
    fill(buf, 45, seed=6)
    return buf


def original2(seed: int = 5, fill_it: bool = True) -> ReplayBuffer:
    """The buffer the format 2 fixture was saved from (same builder, seeds and steps)."""
    buf = ReplayBuffer(1200, sampler="prioritized", num_envs=2, seed=seed,
                       segment_bytes=600 * 158)
    rng = np.random.default_rng(7)
    for _ in range(700 if fill_it else 0):
        buf.add({"obs": rng.random((2, 32), dtype=np.float32), "act": rng.integers(0, 6, 2),
                 "done": rng.random(2) < 0.02}, env_ids=np.arange(2))
    if fill_it:
        idx = rng.integers(0, len(buf), 32)
        buf.update_priority(idx, rng.random(32) * 3)
    return buf


def manifest_of(store: Path) -> dict:
    return json.loads(next(store.glob("snap-*/MANIFEST.json")).read_text())


@pytest.fixture()
def format1(tmp_path):
    store = tmp_path / "format1"
    shutil.copytree(FORMAT1, store)
    return store


@pytest.fixture()
def format2(tmp_path):
    store = tmp_path / "format2"
    shutil.copytree(FORMAT2, store)
    return store


def test_fixtures_are_the_older_formats():
    assert manifest_of(FORMAT1)["format_version"] == 1
    assert manifest_of(FORMAT2)["format_version"] == 2
    segments = json.loads(next(FORMAT2.glob("snap-*/rank-00000.json")).read_text())["segments"]
    assert any("offsets" in seg for seg in segments)  # a padded format 2 segment
    assert not any("narrow" in seg for seg in segments)
    assert fmt.FORMAT_VERSION == 3


@pytest.mark.parametrize("direct", [False, True])
def test_format_1_loads_exactly(format1, direct):
    evict([p for p in format1.rglob("*") if p.is_file()])
    ref = original()
    buf = make(capacity=64, sampler="prioritized", seed=99, segment_bytes=512)
    buf.loads(format1, direct_reads=direct)
    assert_same_state(buf, ref)
    a, b = buf.sample(16), ref.sample(16)
    assert np.array_equal(a[1], b[1]) and np.asarray(a[2]).tobytes() == np.asarray(b[2]).tobytes()


def test_format_1_verifies_and_resaves_as_the_current_format(format1, tmp_path):
    report = snap_inspect.verify(format1)
    assert report["files"] > 0
    assert snap_inspect.describe(format1)["format_version"] == 1
    buf = make(capacity=64, sampler="prioritized", seed=99, segment_bytes=512)
    buf.loads(format1)
    fill(buf, 10, seed=8)  # some chunks change, the rest is reused from the format 1 segments
    buf.dumps(format1)
    latest = fmt.resolve(format1)[2]
    assert latest["format_version"] == fmt.FORMAT_VERSION
    again = make(capacity=64, sampler="prioritized", seed=1, segment_bytes=512)
    again.loads(format1)
    assert_same_state(again, buf)
    copy = tmp_path / "copy"
    buf.dumps(copy, incremental=False)
    fresh = make(capacity=64, sampler="prioritized", seed=1, segment_bytes=512)
    fresh.loads(copy)
    assert_same_state(fresh, buf)


def test_newer_format_is_refused(format1):
    snap = next(format1.glob("snap-*"))
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["format_version"] = fmt.FORMAT_VERSION + 1
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    from RLA.errors import CorruptSnapshotError
    with pytest.raises(CorruptSnapshotError, match=f"snapshot format version {fmt.FORMAT_VERSION + 1}.*upgrade RLA"):
        make(capacity=64, sampler="prioritized", seed=1, segment_bytes=512).loads(format1)


def test_format_1_reshards_into_two_ranks(format1):
    """Resharding reads segments through their offsets too (format 1: none listed)."""
    parts = [make(capacity=64, sampler="prioritized", seed=r) for r in range(2)]
    for r, part in enumerate(parts):
        part.loads(format1, rank=r, world_size=2)
    assert multiset(parts) == multiset([original()])


@pytest.mark.parametrize("direct", [False, True])
def test_format_2_loads_exactly(format2, direct):
    evict([p for p in format2.rglob("*") if p.is_file()])
    ref = original2()
    buf = original2(seed=99, fill_it=False)
    buf.loads(format2, direct_reads=direct)
    assert_same_state(buf, ref)
    a, b = buf.sample(16), ref.sample(16)
    assert np.array_equal(a[1], b[1]) and np.asarray(a[2]).tobytes() == np.asarray(b[2]).tobytes()


def test_format_2_store_takes_a_format_3_save_that_reuses_its_segments(format2):
    assert snap_inspect.verify(format2)["files"] > 0
    buf = original2(seed=99, fill_it=False)
    buf.loads(format2)
    old = {p.name for p in format2.rglob("*.seg")}
    buf.add({"obs": np.ones((2, 32), np.float32), "act": np.array([1, 2]),
             "done": np.array([False, True])}, env_ids=np.arange(2))
    buf.dumps(format2)
    shard = json.loads(next(sorted(format2.glob("snap-*"))[-1:][0].glob("rank-*.json")).read_text())
    files = [Path(seg["file"]).name for seg in shard["segments"]]
    assert [f in old for f in files] == [False, True]  # only the changed chunk is rewritten
    assert "narrow" in shard["segments"][0] and "narrow" not in shard["segments"][1]
    again = original2(seed=1, fill_it=False)
    again.loads(format2)
    assert_same_state(again, buf)


def test_format_2_reshards_into_two_ranks(format2):
    parts = [original2(seed=r, fill_it=False) for r in range(2)]
    for r, part in enumerate(parts):
        part.loads(format2, rank=r, world_size=2)
    def items(bufs):
        out = []
        for buf in bufs:
            g, n = buf.get(np.arange(len(buf))), len(buf)
            prio = np.asarray(buf.priority(np.arange(n)))
            out += [(int(g["episode_id"][i]), int(g["step"][i]), g["obs"][i].tobytes(),
                     int(g["act"][i]), prio[i].tobytes()) for i in range(n)]
        return sorted(out)
    assert sum(len(p) for p in parts) == 1200
    assert items(parts) == items([original2()])


def test_a_skipped_newer_snapshot_is_reported(format2, capsys):
    """Next to a readable snapshot, a newer RLA's one is skipped with a warning (load) and
    listed (inspect), never silently."""
    buf = original2(seed=99, fill_it=False)
    buf.loads(format2)
    snap = buf.dumps(format2, snapshot_id="from-the-future")
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["format_version"] = fmt.FORMAT_VERSION + 1
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.warns(UserWarning, match=r"\['from-the-future'\].*newer RLA"):
        original2(seed=1, fill_it=False).loads(format2)
    from rla_scripts.cli import main as rla
    with pytest.warns(UserWarning, match="newer RLA"):
        assert rla(["buffer", "inspect", str(format2)]) == 0
    out = capsys.readouterr().out
    assert "newer RLA (not readable here): from-the-future" in out and "num_envs=2" in out
