"""Snapshots of an older format keep loading: ``data/format1-small`` was written by RLA's
format 1 (segments without padding, before format 2 lined large chunks up for O_DIRECT)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import inspect as snap_inspect

from helpers import assert_same_state, fill, make, multiset
from test_direct_reads import evict

FORMAT1 = Path(__file__).parent / "data" / "format1-small"


def original():
    """The buffer the format 1 fixture was saved from (same builder, seeds and steps)."""
    buf = make(capacity=64, sampler="prioritized", seed=5, segment_bytes=512)
    fill(buf, 45, seed=6)
    return buf


def manifest_of(store: Path) -> dict:
    return json.loads(next(store.glob("snap-*/MANIFEST.json")).read_text())


@pytest.fixture()
def format1(tmp_path):
    store = tmp_path / "format1"
    shutil.copytree(FORMAT1, store)
    return store


def test_fixture_is_format_1():
    assert manifest_of(FORMAT1)["format_version"] == 1
    assert fmt.FORMAT_VERSION == 2


@pytest.mark.parametrize("direct", [False, True])
def test_format_1_loads_exactly(format1, monkeypatch, direct):
    monkeypatch.setattr(fio, "DIRECT_READS", direct)
    evict([p for p in format1.rglob("*") if p.is_file()])
    ref = original()
    buf = make(capacity=64, sampler="prioritized", seed=99, segment_bytes=512)
    buf.loads(format1)
    assert_same_state(buf, ref)
    a, b = buf.sample(16), ref.sample(16)
    assert np.array_equal(a[1], b[1]) and np.asarray(a[2]).tobytes() == np.asarray(b[2]).tobytes()


def test_format_1_verifies_and_resaves_as_format_2(format1, tmp_path):
    report = snap_inspect.verify(format1)
    assert report["files"] > 0
    assert snap_inspect.describe(format1)["format_version"] == 1
    buf = make(capacity=64, sampler="prioritized", seed=99, segment_bytes=512)
    buf.loads(format1)
    fill(buf, 10, seed=8)  # some chunks change, the rest is reused from the format 1 segments
    buf.dumps(format1)
    latest = fmt.resolve(format1)[2]
    assert latest["format_version"] == 2
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
    with pytest.raises(CorruptSnapshotError, match="snapshot format version 3.*upgrade RLA"):
        make(capacity=64, sampler="prioritized", seed=1, segment_bytes=512).loads(format1)


def test_format_1_reshards_into_two_ranks(format1):
    """Resharding reads segments through their offsets too (format 1: none listed)."""
    parts = [make(capacity=64, sampler="prioritized", seed=r) for r in range(2)]
    for r, part in enumerate(parts):
        part.loads(format1, rank=r, world_size=2)
    assert multiset(parts) == multiset([original()])
