"""R-RT-1..5: save -> load is exact for every storage x sampler x fill level."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import SAMPLERS, assert_same_state, batch, fill, make

FILLS = {"empty": 0, "partial": 10, "full": 32, "wrapped": 40}  # capacity 64, 2 envs per step


@pytest.mark.timeout(60)
@pytest.mark.parametrize("storage", ["ram", "memmap"])
@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("fill_level", list(FILLS))
def test_round_trip_is_exact(tmp_path, storage, sampler, fill_level):
    a = make(sampler=sampler, storage=storage, tmp=tmp_path / "a")
    fill(a, FILLS[fill_level])
    if len(a) >= 8:
        a.sample(4)  # advance the RNG / without-replacement state before saving
    a.dumps(tmp_path / "store")
    b = make(sampler=sampler, storage=storage, tmp=tmp_path / "b", seed=123)
    b.loads(tmp_path / "store")
    assert_same_state(a, b)
    if len(a) >= 8:
        for _ in range(3):  # R-RT-3: the sample stream continues identically
            (xa, ia, wa), (xb, ib, wb) = a.sample(5), b.sample(5)
            assert np.array_equal(ia, ib) and np.array_equal(wa, wb)
            assert xa["obs"].tobytes() == xb["obs"].tobytes()
    # R-RT-2: the same later adds evict the same (oldest) rows in both buffers
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(5):
        a.add(batch(rng_a, 2), env_ids=[0, 1])
        b.add(batch(rng_b, 2), env_ids=[0, 1])
    assert_same_state(a, b)
    a.close()
    b.close()


@pytest.mark.timeout(30)
def test_reload_then_save_to_new_path_works(tmp_path):
    """R-RT-5: a restored buffer can be checkpointed again elsewhere (TorchRL #4388)."""
    a = make(sampler="without_replacement")
    fill(a, 20)
    a.sample(6)
    a.dumps(tmp_path / "one")
    b = make(sampler="without_replacement")
    b.loads(tmp_path / "one")
    b.dumps(tmp_path / "two")
    c = make(sampler="without_replacement")
    c.loads(tmp_path / "two")
    assert_same_state(a, c)
    assert np.array_equal(a.sample(6)[1], c.sample(6)[1])


@pytest.mark.timeout(30)
def test_no_schema_drift_and_nested_fields_round_trip(tmp_path):
    """R-RT-7: the loaded buffer has exactly the saved keys, nested as given."""
    a = make()
    fill(a, 5)
    a.dumps(tmp_path / "s")
    b = make()
    b.loads(tmp_path / "s")
    got = b.get(np.arange(len(b)))
    assert set(got) == {"obs", "next", "act", "done", "tag", "env_id", "episode_id", "step"}
    assert set(got["next"]) == {"obs"}
    assert got["tag"].dtype == np.dtype("<U4")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("direct", [True, False], ids=["o_direct", "page_cache"])
def test_datetime_and_timedelta_fields_round_trip(tmp_path, direct):
    """datetime64 / timedelta64 fields (which the buffer protocol refuses) save, load, save
    incrementally, verify and reshard bit for bit; large enough for in-place O_DIRECT chunks."""
    from RLA.replay_buffer import ReplayBuffer
    from RLA.replay_buffer.snapshot.inspect import verify
    schema = {"t": ((), "M8[ns]"), "dt": ((2,), "m8[s]"), "x": ((3,), "float32"),
              "done": ((), "bool")}
    rng = np.random.default_rng(0)

    def rows(n: int) -> dict:
        return {"t": rng.integers(0, 2 ** 62, n).astype("M8[ns]"),
                "dt": rng.integers(-10 ** 9, 10 ** 9, (n, 2)).astype("m8[s]"),
                "x": rng.random((n, 3), np.float32), "done": rng.random(n) < 0.01}
    a = ReplayBuffer(50_000, schema)
    a.add(rows(30_000))
    a.dumps(tmp_path / "s")
    a.add(rows(30_000))  # wraps; the next snapshot is incremental
    a.dumps(tmp_path / "s")
    b = ReplayBuffer(50_000, schema)
    b.loads(tmp_path / "s", direct_reads=direct)
    assert_same_state(a, b)
    assert b.get([0])["t"].dtype == np.dtype("M8[ns]")
    assert verify(tmp_path / "s", direct_reads=direct)["files"] >= 2
    parts = [ReplayBuffer(30_000, schema) for _ in range(2)]  # room for whole episodes
    for rank, part in enumerate(parts):  # one shard read as two ranks
        part.loads(tmp_path / "s", rank=rank, world_size=2, direct_reads=direct)
    assert sorted(np.concatenate([p.get(np.arange(len(p)))["t"] for p in parts]).tolist()) == \
        sorted(a.get(np.arange(len(a)))["t"].tolist())


STRUCTURED = np.dtype({"names": ["a", "pos", "inner"],
                       "formats": ["<i4", "(2,)<f8", np.dtype([("k", "u1"), ("z", "<c8")])],
                       "offsets": [0, 8, 24], "itemsize": 40})  # padded, nested, sub-array


@pytest.mark.timeout(30)
def test_structured_fields_keep_their_names_offsets_and_values(tmp_path):
    """A structured dtype (whose type string '|V40' would lose its fields) comes back equal,
    into a declared schema and into a buffer that adopts the saved one; trajectories too."""
    from RLA.replay_buffer import ReplayBuffer, TrajectoryReplayBuffer
    from RLA.replay_buffer.schema import dtype_from_json, dtype_to_json
    for dt in (STRUCTURED, np.dtype("(2,3)<f4"), np.dtype("<U4"), np.dtype("c16")):
        assert dtype_from_json(dtype_to_json(dt)) == dt
    values = np.zeros(6, STRUCTURED)
    values["a"] = np.arange(6)
    values["pos"] = np.arange(12.0).reshape(6, 2)
    values["inner"]["z"] = np.arange(6) * (1 + 2j)
    schema = {"s": ((), STRUCTURED), "c": ((), "c16")}
    a = ReplayBuffer(10, schema)
    a.add({"s": values, "c": np.arange(6) * 1j})
    a.dumps(tmp_path / "s")
    for b in (ReplayBuffer(10, schema), ReplayBuffer(10)):
        b.loads(tmp_path / "s")
        got = b.get(np.arange(6))["s"]
        assert got.dtype == STRUCTURED and (got == values).all()  # padding bytes are not data
        assert got["inner"]["z"][5] == 5 + 10j
    traj = TrajectoryReplayBuffer(seed=0)
    traj.add_trajectories([{"s": values}])
    traj.save_checkpoint(tmp_path / "traj")
    back = TrajectoryReplayBuffer(seed=0)
    back.load_checkpoint(tmp_path / "traj")
    got = back.sample(4)["s"]
    assert got.dtype == STRUCTURED and np.isin(got["a"], values["a"]).all()
    traj.close()
    back.close()


@pytest.mark.timeout(30)
def test_load_into_buffer_without_schema_adopts_it(tmp_path):
    from RLA.replay_buffer import ReplayBuffer
    a = make()
    fill(a, 5)
    a.dumps(tmp_path / "s")
    b = ReplayBuffer(64, num_envs=2)
    b.loads(tmp_path / "s")
    assert_same_state(a, b)


@pytest.mark.timeout(30)
def test_torch_tensors_in_and_out(tmp_path):
    torch = pytest.importorskip("torch")
    from RLA.replay_buffer import ReplayBuffer
    buf = ReplayBuffer(16, sampler="prioritized", seed=1)
    buf.add({"obs": torch.arange(12, dtype=torch.float32).reshape(4, 3),
             "done": torch.tensor([False, False, True, False])})
    out, idx, w = buf.sample(3)
    assert isinstance(out["obs"], torch.Tensor) and isinstance(w, torch.Tensor)
    buf.update_priority(idx, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    buf.dumps(tmp_path / "t")
    other = ReplayBuffer(16, sampler="prioritized")
    other.loads(tmp_path / "t")
    assert isinstance(other.get([0])["obs"], torch.Tensor)
    assert torch.equal(other.priority([0, 1, 2, 3]), buf.priority([0, 1, 2, 3]))
