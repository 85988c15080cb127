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
