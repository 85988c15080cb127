"""TrajectoryReplayBuffer: the seed API without the RLinf bugs (research §2.2)."""
from __future__ import annotations

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.replay_buffer import TrajectoryReplayBuffer


def trajs(n: int, start: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [{"obs": rng.random((5 + i, 4)).astype(np.float32), "action": np.arange(5 + i),
             "model_weights_id": f"w{start + i}"} for i in range(n)]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("auto_save", [False, True])
def test_checkpoint_holds_every_indexed_trajectory_and_rng_continues(tmp_path, auto_save):
    buf = TrajectoryReplayBuffer(seed=1, cache_size=2, sample_window_size=0,
                                 auto_save=auto_save, auto_save_path=str(tmp_path / "auto"))
    buf.add_trajectories(trajs(6))
    buf.sample(3)  # the window is never a stale cache
    buf.save_checkpoint(tmp_path / "ckpt")
    other = TrajectoryReplayBuffer(seed=99, sample_window_size=0)
    info = other.load_checkpoint(tmp_path / "ckpt")
    assert info["trajectories"] == 6 and info["exact_rng"]
    assert [e["id"] for e in other.index] == [e["id"] for e in buf.index]
    for _ in range(3):
        a, b = buf.sample(16), other.sample(16)
        assert np.array_equal(a["obs"], b["obs"]) and np.array_equal(a["action"], b["action"])
    buf.close()


@pytest.mark.timeout(30)
def test_a_new_checkpoint_keeps_the_files_of_older_ones_in_the_store(tmp_path):
    """Saving after clear() must not collect the trajectories an older checkpoint lists."""
    buf = TrajectoryReplayBuffer(seed=1, sample_window_size=0)
    buf.add_trajectories(trajs(3))
    first = buf.save_checkpoint(tmp_path / "ckpt")
    buf.clear()
    buf.add_trajectories(trajs(2, start=3, seed=1))
    buf.save_checkpoint(tmp_path / "ckpt")
    old = TrajectoryReplayBuffer(seed=5, sample_window_size=0)
    assert old.load_checkpoint(first)["trajectories"] == 3
    assert [e["model_weights_id"] for e in old.index] == ["w0", "w1", "w2"]
    new = TrajectoryReplayBuffer(seed=5, sample_window_size=0)
    assert new.load_checkpoint(tmp_path / "ckpt")["trajectories"] == 2
    buf.save_checkpoint(tmp_path / "ckpt", keep_last=1)  # now the old files may go
    left = {p.name for p in (tmp_path / "ckpt" / "segments" / "r00000").iterdir()}
    assert len(left) == 2
    buf.close()


@pytest.mark.timeout(30)
def test_auto_save_writes_npz_files_named_by_id(tmp_path):
    with TrajectoryReplayBuffer(auto_save=True, auto_save_path=str(tmp_path), cache_size=1) as b:
        ids = b.add_trajectories(trajs(3))
        b.flush()
        names = sorted(p.name for p in tmp_path.glob("trajectory_*"))
        assert names == sorted(f"trajectory_{i}_w{k}.npz" for k, i in enumerate(ids))
        b.clear_cache()
        assert b.sample(4)["obs"].shape == (4, 4)  # read back from the files


@pytest.mark.timeout(30)
def test_distributed_load_balances_and_ids_stay_unique(tmp_path):
    src = TrajectoryReplayBuffer(seed=3)
    src.add_trajectories(trajs(9))
    src.save_checkpoint(tmp_path / "c")
    parts = []
    for rank in range(3):
        b = TrajectoryReplayBuffer()
        b.load_checkpoint(tmp_path / "c", is_distributed=True, local_rank=rank, world_size=3)
        parts.append(b)
    all_ids = [e["id"] for b in parts for e in b.index]
    assert sorted(all_ids) == sorted(e["id"] for e in src.index)
    steps = [b.total_steps for b in parts]
    assert max(steps) - min(steps) <= 13
    new_ids = [b.add_trajectories(trajs(1))[0] for b in parts]
    assert len(set(new_ids) | set(all_ids)) == len(new_ids) + len(all_ids)


@pytest.mark.timeout(30)
def test_pickle_format_needs_opt_in(tmp_path):
    with pytest.raises(ReplayBufferError, match="Pickle trajectory files are disabled"):
        TrajectoryReplayBuffer(auto_save=True, auto_save_path=str(tmp_path),
                               trajectory_format="pkl")
    with pytest.raises(ReplayBufferError, match="Unknown trajectory_format"):
        TrajectoryReplayBuffer(trajectory_format="h5")


@pytest.mark.timeout(30)
def test_pt_format_round_trips(tmp_path):
    pytest.importorskip("torch")
    with TrajectoryReplayBuffer(auto_save=True, auto_save_path=str(tmp_path), cache_size=0,
                                trajectory_format="pt") as b:
        b.add_trajectories(trajs(2))
        b.flush()
        assert len(list(tmp_path.glob("*.pt"))) == 2
        assert b.sample(3)["action"].shape == (3,)


@pytest.mark.timeout(30)
def test_corrupt_checkpoint_leaves_buffer_untouched(tmp_path):
    src = TrajectoryReplayBuffer()
    src.add_trajectories(trajs(3))
    src.save_checkpoint(tmp_path / "c")
    seg = sorted((tmp_path / "c" / "segments" / "r00000").iterdir())[1]
    data = bytearray(seg.read_bytes())
    data[3] ^= 0xFF
    seg.write_bytes(bytes(data))
    live = TrajectoryReplayBuffer()
    live.add_trajectories(trajs(2, seed=5))
    with pytest.raises(CorruptSnapshotError, match=seg.name):
        live.load_checkpoint(tmp_path / "c")
    assert len(live) == 2


@pytest.mark.timeout(30)
def test_sample_empty_and_mismatched_lengths_are_errors():
    buf = TrajectoryReplayBuffer()
    with pytest.raises(ReplayBufferError, match="empty trajectory buffer"):
        buf.sample(2)
    with pytest.raises(ReplayBufferError, match="different lengths"):
        buf.add_trajectories([{"a": np.zeros(3), "b": np.zeros(4)}])
