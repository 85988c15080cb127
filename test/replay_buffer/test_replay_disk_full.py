"""A replay save on a full disk is a DiskFullError naming the file and the free space; the
earlier snapshots stay loadable and the failed save leaves no staging folder and no segment.
The disk fills at deterministic points of the save (faults.injected): a real 8 MiB tmpfs
(root only) and an injected ENOSPC."""
from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest

from RLA.errors import DiskFullError
from RLA.replay_buffer import ReplayBuffer, TrajectoryReplayBuffer
from RLA.replay_buffer.snapshot import faults

SCHEMA = {"obs": ((256,), "uint8"), "v": ((), "int64")}
#: Where the disk fills: before the segments are written, before MANIFEST.json is. (After
#: it only renames remain, which need no space.)
FILL_POINTS = ["replay.save:space-checked", "replay.publish:staging-written"]
#: Where an ENOSPC is injected (the last one fails a save whose files are all written).
POINTS = FILL_POINTS + ["replay.publish:manifest-written"]


def filled(value: int, n: int = 2000) -> ReplayBuffer:
    buf = ReplayBuffer(n, SCHEMA, segment_bytes=64 << 10)
    buf.add({"obs": np.full((n, 256), value, np.uint8), "v": np.full(n, value)})
    return buf


def files(store: Path) -> set:
    return {str(p.relative_to(store)) for p in store.rglob("*")}


def value_of(store: Path) -> int:
    buf = ReplayBuffer(2000, SCHEMA)
    buf.loads(store)
    values = np.unique(buf.storage.arrays["v"][:len(buf)])
    assert len(buf) == 2000 and values.size == 1
    assert np.unique(buf.storage.arrays["obs"][:len(buf)]).tolist() == [values[0]]
    return int(values[0])


def save(buf: ReplayBuffer, store: Path, asynchronous: bool) -> None:
    if asynchronous:
        buf.dumps_async(store).wait(timeout=60)
    else:
        buf.dumps(store)


@pytest.fixture()
def tmpfs(tmp_path) -> Iterator[Path]:
    """A real 8 MiB tmpfs under tmp_path, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {out.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def fill_disk(mnt: Path) -> Callable[[], None]:
    """Write a ballast file until the file system is full; returns its remover."""
    ballast = mnt / "ballast"
    with open(ballast, "wb", buffering=0) as handle:
        try:
            for _ in range(10_000):  # bounded: 8 MiB in 4 KiB writes fits well within
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return ballast.unlink


@pytest.mark.timeout(120)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("point", FILL_POINTS)
def test_full_tmpfs_is_a_disk_full_error_and_keeps_the_old_snapshot(tmpfs, point, asynchronous):
    store = tmpfs / "store"
    filled(1).dumps(store)
    before = files(store)
    buf = filled(2)
    ballast: list = []

    def at(name: str) -> None:
        if name == point and not ballast:
            ballast.append(fill_disk(tmpfs))
    with faults.injected(at), pytest.raises(DiskFullError) as info:
        save(buf, store, asynchronous)
    assert info.value.errno in (errno.ENOSPC, errno.EDQUOT) and isinstance(info.value, OSError)
    assert str(tmpfs) in str(info.value) and "free" in str(info.value)
    assert files(store) == before  # no staging folder, no new segment, nothing else
    assert value_of(store) == 1
    ballast[0]()
    save(buf, store, asynchronous)  # room again: the same buffer saves
    assert value_of(store) == 2


@pytest.mark.timeout(120)
def test_full_tmpfs_trajectory_checkpoint(tmpfs):
    store = tmpfs / "store"
    buf = TrajectoryReplayBuffer()
    buf.add_trajectories([{"obs": np.ones((100, 64), np.float32)}])
    buf.save_checkpoint(store)
    before = files(store)
    buf.add_trajectories([{"obs": np.full((3000, 64), 2, np.float32)}])  # 768 KB more
    remove = fill_disk(tmpfs)
    with pytest.raises(DiskFullError, match="could not write"):
        buf.save_checkpoint(store)
    assert files(store) == before
    again = TrajectoryReplayBuffer()
    assert again.load_checkpoint(store)["trajectories"] == 1
    remove()
    buf.save_checkpoint(store)
    assert TrajectoryReplayBuffer().load_checkpoint(store)["trajectories"] == 2


@pytest.mark.timeout(60)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("point", POINTS)
def test_injected_enospc_is_a_disk_full_error(tmp_path, point, asynchronous):
    """The same guarantees where no tmpfs can be mounted: ENOSPC raised at each point."""
    store = tmp_path / "store"
    filled(1).dumps(store)
    before = files(store)

    def at(name: str) -> None:
        if name == point:
            raise OSError(errno.ENOSPC, "No space left on device")
    with faults.injected(at), pytest.raises(DiskFullError, match="The disk is full"):
        save(filled(2), store, asynchronous)
    assert files(store) == before
    assert value_of(store) == 1
