"""One check of a snapshot's manifests for every reader: ``loads``, ``rla buffer verify``,
``inspect`` and the reshard tool refuse the same damaged or hostile manifests (shapes larger
than their files, names outside the store, links), before allocating anything."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Callable, Dict

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.replay_buffer import ReplayBuffer, TrajectoryReplayBuffer
from RLA.replay_buffer.sharding import reshard_snapshot
from RLA.replay_buffer.snapshot.inspect import describe, verify

from helpers import fill, make

ROOT = Path(__file__).resolve().parents[2]


def tamper(snap: Path, edit: Callable[[Dict[str, Any]], None], rank: int = 0) -> None:
    """Edit a shard manifest and re-sign it in MANIFEST.json (a consistent forgery: only the
    manifest checks can refuse it, not the checksums)."""
    shard_path = snap / f"rank-{rank:05d}.json"
    shard = json.loads(shard_path.read_text())
    edit(shard)
    data = json.dumps(shard).encode()
    shard_path.write_bytes(data)
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    for entry in manifest["shards"]:
        if entry["rank"] == rank:
            entry.update(bytes=len(data), crc32=zlib.crc32(data))
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))


def cli_verify(store: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = "import sys; from rla_scripts.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "buffer", "verify", str(store)],
                          capture_output=True, text=True, env=env, timeout=120)


READERS = {
    "loads": lambda store, tmp: make(sampler="prioritized").loads(store),
    "verify": lambda store, tmp: verify(store),
    "inspect": lambda store, tmp: describe(store),
    "reshard": lambda store, tmp: reshard_snapshot(store, tmp / "out", 2),
}


@pytest.fixture()
def saved(tmp_path):
    buf = make(sampler="prioritized")
    fill(buf, 20)
    snap = buf.dumps(tmp_path / "store")
    return tmp_path / "store", snap


def no_equal_sizes(message: str) -> None:
    """A message never says 'Expected: N bytes. Found: N bytes' (names what differs)."""
    pair = re.search(r"Expected: (\d+) bytes.*Found: (\d+) bytes", message)
    assert pair is None or pair.group(1) != pair.group(2), message


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_array_shape_of_72_tib_is_refused_before_allocating(saved, tmp_path, reader):
    store, snap = saved
    tamper(snap, lambda s: s["arrays"]["priority"].update(shape=[10 ** 13]))
    with pytest.raises(CorruptSnapshotError, match="array 'priority' does not match its file") \
            as info:
        READERS[reader](store, tmp_path)
    assert "80000000000000 bytes" in str(info.value)


@pytest.mark.timeout(60)
def test_cli_verify_fails_on_a_shape_loads_refuses(saved):
    store, snap = saved
    assert cli_verify(store).returncode == 0
    tamper(snap, lambda s: s["arrays"]["priority"].update(shape=[10 ** 13]))
    out = cli_verify(store)
    assert out.returncode != 0 and "OK" not in out.stdout, out.stdout
    assert "priority" in out.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_listed_size_larger_than_the_file_names_both(saved, tmp_path, reader):
    """Shape and listed size agree with each other, not with the file on disk."""
    store, snap = saved

    def grow(shard: Dict[str, Any]) -> None:
        meta = shard["arrays"]["priority"]
        meta.update(shape=[meta["shape"][0] + 3], bytes=meta["bytes"] + 24)
    tamper(snap, grow)
    with pytest.raises(CorruptSnapshotError, match="priority.bin has the wrong size") as info:
        READERS[reader](store, tmp_path)
    no_equal_sizes(str(info.value))


@pytest.mark.timeout(60)
def test_shape_larger_than_the_file_message_names_what_differs(saved):
    """The old message read 'Expected: 328 bytes. Found: 328 bytes' (the views were larger
    than the file); the read itself now names the shapes against the listed size too."""
    from RLA.replay_buffer.snapshot import file_io as fio
    _, snap = saved
    path = snap / "rank-00000" / "priority.bin"
    size = path.stat().st_size
    buf = np.empty(size + 8, dtype=np.uint8)
    with pytest.raises(CorruptSnapshotError, match="does not match its manifest") as info:
        fio.read_verified(path, [memoryview(buf)], size, 0, direct=False)
    no_equal_sizes(str(info.value))
    assert f"{size + 8} bytes" in str(info.value) and f"{size} bytes listed" in str(info.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("name", ["../../outside.seg", "segments/r00000/../../../outside.seg",
                                  "/ABS/outside.seg", "segments/r00000/x\n.seg", "outside.seg"])
def test_segment_name_outside_the_store_is_refused(saved, tmp_path, reader, name):
    """Even with a byte-exact copy of the segment there (so the checksum would pass)."""
    store, snap = saved
    shard = json.loads((snap / "rank-00000.json").read_text())
    real = store / shard["segments"][0]["file"]
    name = name.replace("/ABS", str(tmp_path))
    target = (store / name) if not name.startswith("/") else Path(name)
    if "\n" not in name:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(real, target.resolve())
    tamper(snap, lambda s: s["segments"][0].update(file=name))
    with pytest.raises(CorruptSnapshotError, match="file name .* is refused"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_array_name_outside_the_snapshot_is_refused(saved, tmp_path, reader):
    store, snap = saved
    real = snap / "rank-00000" / "priority.bin"
    shutil.copy(real, store / "priority.bin")
    tamper(snap, lambda s: s["arrays"]["priority"].update(file="../priority.bin"))
    with pytest.raises(CorruptSnapshotError, match="file name '../priority.bin' is refused"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_shard_file_name_outside_the_snapshot_is_refused(saved, tmp_path, reader):
    store, snap = saved
    shutil.copy(snap / "rank-00000.json", store / "rank-00000.json")
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["shards"][0]["file"] = "../rank-00000.json"
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptSnapshotError, match="shard file name '../rank-00000.json' is "
                                                   "refused"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_symlinked_segment_is_not_followed(saved, tmp_path, reader):
    store, snap = saved
    shard = json.loads((snap / "rank-00000.json").read_text())
    seg = store / shard["segments"][1]["file"]
    outside = tmp_path / "elsewhere.seg"
    shutil.move(seg, outside)
    seg.symlink_to(outside)
    with pytest.raises(CorruptSnapshotError, match="not a regular file|symbolic link"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_symlinked_segment_folder_is_not_followed(saved, tmp_path, reader):
    store, _ = saved
    seg_dir = store / "segments" / "r00000"
    shutil.move(seg_dir, tmp_path / "elsewhere")
    seg_dir.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CorruptSnapshotError, match="symbolic link"):
        READERS[reader](store, tmp_path)


@pytest.mark.timeout(60)
def test_symlinked_snapshot_folder_is_not_listed(saved, tmp_path):
    store, snap = saved
    shutil.copytree(snap, tmp_path / "planted")
    (store / "snap-99999999").symlink_to(tmp_path / "planted")
    assert [s for s in describe(store)["snapshots"]] == [snap.name]
    with pytest.raises(ReplayBufferError, match="No snapshot 'snap-99999999'"):
        verify(store, "snap-99999999")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("edit, match", [
    (lambda s: s.update(size=s["capacity"] + 1), "bad size"),
    (lambda s: s.update(cursor=-1), "bad cursor"),
    (lambda s: s.update(capacity=10 ** 15), "too large to have been saved"),
    (lambda s: s["schema"][0].update(shape=[10 ** 13]), "too large to have been saved"),
    (lambda s: s["schema"][0].update(shape=[-3]), "bad dimension"),
    (lambda s: s["schema"][0].update(dtype="|O"), "bad dtype or shape"),
    (lambda s: s.update(segment_fields=[]), "bad segment_fields"),
    (lambda s: s["segments"][0].update(start=1), "does not match its segments"),
    (lambda s: s["episodes"].update(num_envs=10 ** 9), "bad num_envs"),
    (lambda s: s.pop("sampler"), "bad sampler"),
    (lambda s: s["arrays"]["priority"].update(dtype="<f4", shape=[128]), "priority"),
])
def test_inconsistent_shard_manifest_is_refused(saved, tmp_path, reader, edit, match):
    store, snap = saved
    tamper(snap, edit)
    with pytest.raises(CorruptSnapshotError, match=match):
        READERS[reader](store, tmp_path)


# --------------------------------------------------------------------- reserved names
@pytest.mark.parametrize("spec", [{"step": ((), "int64")}, {"env_id": ((), "int64")},
                                  {"episode_id": ((2,), "float32")},
                                  {"obs": ((3,), "float32"), "step": {"a": ((), "int64")}}])
def test_reserved_field_name_is_refused_at_schema_time(spec):
    with pytest.raises(ReplayBufferError, match="is reserved") as info:
        ReplayBuffer(8, spec)
    assert "rename your field" in str(info.value)


def test_reserved_field_name_is_refused_on_the_first_add():
    buf = ReplayBuffer(8)
    with pytest.raises(ReplayBufferError, match="'step' is reserved"):
        buf.add({"obs": np.zeros((2, 3)), "step": np.arange(2)})
    assert buf.schema is None


def test_nested_field_of_a_reserved_name_is_fine():
    buf = ReplayBuffer(8, {"next": {"step": ((), "int64")}, "obs": ((), "float32")})
    buf.add({"next": {"step": np.array([7])}, "obs": np.array([1.0])})
    got = buf.get([0])
    assert got["next"]["step"].tolist() == [7] and got["step"].tolist() == [0]


def test_trajectory_field_of_a_reserved_name_is_refused():
    buf = TrajectoryReplayBuffer()
    with pytest.raises(ReplayBufferError, match="'episode_id' is reserved"):
        buf.add_trajectories([{"obs": np.zeros((4, 2)), "episode_id": np.zeros(4)}])
    assert len(buf) == 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reader", ["loads", "verify", "inspect"])
def test_old_snapshot_with_a_reserved_name_is_refused_on_load(saved, tmp_path, reader):
    """A snapshot written before the names were reserved: refused with how to get it back."""
    store, snap = saved
    tamper(snap, lambda s: s["schema"][2].update(name="step"))
    with pytest.raises(ReplayBufferError, match="named 'step', a name RLA now reserves") as info:
        {**READERS, "loads": lambda st, t: ReplayBuffer(64).loads(st)}[reader](store, tmp_path)
    assert "load it with the RLA version that wrote it" in str(info.value)


@pytest.mark.timeout(60)
def test_trajectory_checkpoint_names_and_shapes_are_checked(tmp_path):
    buf = TrajectoryReplayBuffer()
    buf.add_trajectories([{"obs": np.ones((5, 2), np.float32)}])
    snap = buf.save_checkpoint(tmp_path / "store")

    def huge(shard: Dict[str, Any]) -> None:
        shard["trajectories"][0]["segment"]["fields"][0]["shape"] = [10 ** 13, 2]
    tamper(snap, huge)
    for read in (lambda: TrajectoryReplayBuffer().load_checkpoint(tmp_path / "store"),
                 lambda: verify(tmp_path / "store")):
        with pytest.raises(CorruptSnapshotError, match="does not match its"):
            read()
    tamper(snap, lambda s: s["trajectories"][0]["segment"].update(file="../../x.seg"))
    with pytest.raises(CorruptSnapshotError, match="is refused"):
        verify(tmp_path / "store")
