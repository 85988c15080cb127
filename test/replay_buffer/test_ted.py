"""R-EP-3: TED/flat dedup is checked on the data and round-trips exactly."""
from __future__ import annotations

import numpy as np
import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import ReplayBuffer

from helpers import assert_same_state

SCHEMA = {"obs": ((4, 8), "uint8"), "next": {"obs": ((4, 8), "uint8")}, "done": ((), "bool")}


def ted_buffer(capacity=300, steps=130, violate=True, num_envs=2):
    buf = ReplayBuffer(capacity, SCHEMA, num_envs=num_envs, segment_bytes=2048, seed=0)
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 255, (num_envs, 4, 8), dtype=np.uint8)
    for t in range(steps):
        nxt = rng.integers(0, 255, (num_envs, 4, 8), dtype=np.uint8)
        done = rng.random(num_envs) < 0.05
        buf.add({"obs": obs, "next": {"obs": nxt}, "done": done}, env_ids=np.arange(num_envs))
        reset = rng.integers(0, 255, (num_envs, 4, 8), dtype=np.uint8)
        obs = np.where(done[:, None, None], reset, nxt)
        if violate and t == 40:
            obs = obs.copy()
            obs[0, 0, 0] ^= 1  # breaks next_obs[t] == obs[t+1] without an episode end
    return buf


def seg_bytes(store):
    return sum(p.stat().st_size for p in (store / "segments").rglob("*.seg"))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("steps", [60, 150, 170])  # partial, exactly full, wrapped
def test_dedup_round_trip_is_exact(tmp_path, steps):
    buf = ted_buffer(steps=steps)
    buf.dumps(tmp_path / "ted", dedup={"next.obs": "obs"})
    buf.dumps(tmp_path / "full")
    other = ReplayBuffer(300, SCHEMA, num_envs=2)
    other.loads(tmp_path / "ted")
    assert_same_state(buf, other)
    assert seg_bytes(tmp_path / "ted") < 0.7 * seg_bytes(tmp_path / "full")


@pytest.mark.timeout(30)
def test_violations_are_kept_as_exceptions(tmp_path):
    buf = ted_buffer(violate=True)
    snap = buf.dumps(tmp_path / "ted", dedup={"next.obs": "obs"})
    slots = np.fromfile(snap / "rank-00000" / "ted-next.obs-slots.bin", dtype=np.int64)
    g = buf.get(slots)
    # every exception is an episode end, an open tail, or the violated row
    ends = g["done"] | (np.isin(slots, [(buf.cursor - 1) % buf.capacity,
                                         (buf.cursor - 2) % buf.capacity]))
    assert (~ends).sum() == 1


@pytest.mark.timeout(60)
def test_dedup_survives_resharding(tmp_path):
    buf = ted_buffer(steps=140)
    buf.dumps(tmp_path / "ted", dedup={"next.obs": "obs"})
    parts = [ReplayBuffer(300, SCHEMA, num_envs=2) for _ in range(2)]
    for r, part in enumerate(parts):
        part.loads(tmp_path / "ted", rank=r, world_size=2)
    got = sorted((int(e), int(s), o.tobytes(), n.tobytes()) for p in parts
                 for e, s, o, n in zip(*(lambda g: (g["episode_id"], g["step"], g["obs"],
                                                    g["next"]["obs"]))(p.get(np.arange(len(p))))))
    g = buf.get(np.arange(len(buf)))
    want = sorted((int(e), int(s), o.tobytes(), n.tobytes()) for e, s, o, n in
                  zip(g["episode_id"], g["step"], g["obs"], g["next"]["obs"]))
    assert got == want


@pytest.mark.timeout(30)
def test_bad_dedup_pair_is_rejected(tmp_path):
    buf = ted_buffer(steps=5)
    with pytest.raises(ReplayBufferError, match="Bad dedup pair"):
        buf.dumps(tmp_path / "x", dedup={"next.obs": "done"})
    assert not list((tmp_path / "x").glob("snap-*"))
    assert not list((tmp_path / "x").glob(".staging-*"))


def reference_exceptions(arrays, size, succ):
    """Brute force: a row is an exception unless its successor's obs equals it bit for bit."""
    a, b = arrays["next.obs"], arrays["obs"]
    return np.array([s for s in range(size)
                     if succ[s] < 0 or a[s].tobytes() != b[succ[s]].tobytes()], dtype=np.int64)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("memcmp", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_fast_check_and_rebuild_match_brute_force(monkeypatch, memcmp, seed):
    """Runs of successors a constant distance ahead are compared and copied as slices (blocks
    split inside runs, runs shorter than MIN_RUN gathered); the result must equal a row-by-row
    check whatever the interleaving, episode ends, wrap and contract violations."""
    from RLA.replay_buffer import ted
    monkeypatch.setattr(ted, "BLOCK_BYTES", 7 * 32)  # 7 rows per block: splits every run
    if not memcmp:
        monkeypatch.setattr(ted, "libc_function", lambda *a, **k: None)
    rng = np.random.default_rng(seed)
    num_envs = [1, 2, 3, 5][seed]
    buf = ted_buffer(capacity=257, steps=int(rng.integers(40, 140)), num_envs=num_envs)
    size = len(buf)
    arrays = buf.storage.arrays
    for s in rng.choice(size, 6, replace=False):  # scattered violations, some inside runs
        arrays["next.obs"][s, 1, 2] ^= 0x40
    succ = ted.successors(arrays["_episode_id"][:size], arrays["_step"][:size])
    exc = ted.exceptions(arrays, {"next.obs": "obs"}, size, succ)
    slots, values = exc["next.obs"]
    np.testing.assert_array_equal(slots, reference_exceptions(arrays, size, succ))
    np.testing.assert_array_equal(values, arrays["next.obs"][slots])
    rebuilt = {"obs": arrays["obs"], "next.obs": np.zeros_like(arrays["next.obs"])}
    ted.restore(rebuilt, {"next.obs": "obs"}, size, succ, exc)
    np.testing.assert_array_equal(rebuilt["next.obs"][:size], arrays["next.obs"][:size])


@pytest.mark.timeout(30)
def test_runs_split_long_and_short_stretches():
    from RLA.replay_buffer import ted
    succ = np.full(60, -1, dtype=np.int64)
    succ[0:30] = np.arange(1, 31)       # one env: distance 1 for 30 slots
    succ[31:36] = np.arange(34, 39)     # a short stretch at distance 3: gathered
    succ[36:58] = np.arange(38, 60)     # distance 2, long
    long_runs, rest = ted.runs(succ, 60)
    assert long_runs == [(0, 30, 1), (36, 58, 2)]
    assert rest.tolist() == list(range(31, 36))
    covered = set(rest.tolist()) | {s for a, b, _ in long_runs for s in range(a, b)}
    assert covered == set(np.flatnonzero(succ >= 0).tolist())
    assert all((succ[a:b] == np.arange(a, b) + k).all() for a, b, k in long_runs)
