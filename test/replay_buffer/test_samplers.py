"""Samplers: tree correctness, PER statistics, without-replacement epochs, sequences."""
from __future__ import annotations

import numpy as np
import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.trees import SegmentTree

from helpers import fill, make


@pytest.mark.timeout(30)
def test_segment_tree_matches_brute_force():
    rng = np.random.default_rng(0)
    tree, mins = SegmentTree(37, "sum"), SegmentTree(37, "min")
    leaves = np.zeros(37)
    for _ in range(50):
        idx = rng.integers(0, 37, 5)
        vals = rng.random(5)
        tree.update(idx, vals)
        mins.update(idx, vals)
        for i, v in zip(idx, vals):
            leaves[i] = v
    assert tree.root == pytest.approx(leaves.sum())
    touched = np.zeros(37, bool)
    touched[np.flatnonzero(leaves)] = True
    assert mins.root == leaves[touched].min()
    u = rng.random(200) * tree.root
    expect = np.searchsorted(np.cumsum(leaves), u, side="right")
    assert np.array_equal(tree.find_prefix(u), expect)
    rebuilt = SegmentTree(37, "sum")
    rebuilt.rebuild(leaves)
    assert rebuilt.tree.tobytes() == tree.tree.tobytes()


@pytest.mark.timeout(60)
def test_prioritized_histogram_survives_restore(tmp_path):
    """R-RT-4: same distribution (chi-square) and identical draws after a restore."""
    buf = ReplayBuffer(50, {"x": ((), "float32")}, sampler="prioritized",
                       sampler_options={"alpha": 1.0, "beta": 0.5}, seed=3)
    buf.add({"x": np.arange(50, dtype=np.float32)})
    buf.update_priority(np.arange(50), np.arange(1, 51, dtype=np.float64))
    buf.dumps(tmp_path / "p")
    other = ReplayBuffer(50, {"x": ((), "float32")}, sampler="prioritized")
    other.loads(tmp_path / "p")
    assert other.sampler.max_priority == buf.sampler.max_priority == 50.0
    assert other.sampler.sum_tree.tree.tobytes() == buf.sampler.sum_tree.tree.tobytes()
    assert np.array_equal(buf.sample(64)[1], other.sample(64)[1])
    counts = np.zeros(50)
    for _ in range(100):
        _, idx, _ = other.sample(1000)
        counts += np.bincount(idx, minlength=50)
    expected = np.arange(1, 51) / np.arange(1, 51).sum() * counts.sum()
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 100  # 49 dof: p > 0.01 needs chi2 < 74.9; stratified draws are tighter


@pytest.mark.timeout(30)
def test_importance_weights_are_normalised():
    buf = ReplayBuffer(8, {"x": ((), "float32")}, sampler="prioritized",
                       sampler_options={"alpha": 1.0, "beta": 1.0})
    buf.add({"x": np.zeros(4, np.float32)})
    buf.update_priority(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    _, idx, w = buf.sample(256)
    assert w.max() <= 1.0 + 1e-12
    p = (np.array([1, 2, 3, 4.0]) + 1e-6) / (10 + 4e-6)
    expect = (4 * p[idx]) ** -1.0 / (4 * p.min()) ** -1.0
    assert np.allclose(w, expect)


@pytest.mark.timeout(30)
def test_bad_priorities_are_rejected():
    buf = make(sampler="prioritized")
    fill(buf, 4, touch_priorities=False)
    with pytest.raises(ReplayBufferError, match="finite and non-negative"):
        buf.update_priority([0], [-1.0])
    with pytest.raises(ReplayBufferError, match="Index out of range"):
        buf.update_priority([999], [1.0])
    uniform = make()
    fill(uniform, 2)
    with pytest.raises(ReplayBufferError, match="has no priorities"):
        uniform.update_priority([0], [1.0])


@pytest.mark.timeout(30)
def test_without_replacement_visits_every_item_once_per_epoch():
    buf = make(sampler="without_replacement")
    fill(buf, 10)  # 20 items
    seen = np.concatenate([buf.sample(5)[1] for _ in range(4)])
    assert sorted(seen.tolist()) == list(range(20))


@pytest.mark.timeout(30)
def test_sequence_samples_stay_inside_one_episode():
    buf = make(sampler="sequence")
    fill(buf, 40)
    batch, idx, _ = buf.sample(32)
    meta = buf.get(idx.reshape(-1))
    ep = meta["episode_id"].reshape(idx.shape)
    step = meta["step"].reshape(idx.shape)
    assert idx.shape == (32, 3) and batch["obs"].shape == (32, 3, 3)
    assert (ep == ep[:, :1]).all()
    assert (np.diff(step, axis=1) == 1).all()


@pytest.mark.timeout(30)
def test_sampling_an_empty_buffer_is_a_clear_error():
    with pytest.raises(ReplayBufferError, match="empty replay buffer"):
        make().sample(4)


@pytest.mark.timeout(30)
def test_unknown_sampler_and_bad_options_are_clear_errors():
    from RLA.errors import RLAError
    with pytest.raises(RLAError, match="did you mean 'prioritized'"):
        ReplayBuffer(4, sampler="prioritised")
    with pytest.raises(ReplayBufferError, match="Bad options for the 'prioritized' sampler"):
        ReplayBuffer(4, sampler="prioritized", sampler_options={"alhpa": 1.0})
