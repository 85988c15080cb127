"""R-EP-1/2: episode classification on save and the per-class load policies."""
from __future__ import annotations

import numpy as np
import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.schema import FLAG_TRUNCATED
from RLA.replay_buffer.snapshot.format import read_manifest

SCHEMA = {"x": ((), "float32"), "done": ((), "bool"), "truncated": ((), "bool")}


def three_episodes_wrapped(open_tail: int = 0) -> ReplayBuffer:
    buf = ReplayBuffer(2500, SCHEMA, segment_bytes=4096)
    for _ in range(3):
        done = np.zeros(1000, bool)
        done[-1] = True
        buf.add({"x": np.arange(1000, dtype=np.float32), "done": done,
                 "truncated": np.zeros(1000, bool)})
    if open_tail:
        buf.add({"x": np.zeros(open_tail, np.float32), "done": np.zeros(open_tail, bool),
                 "truncated": np.zeros(open_tail, bool)})
    return buf


@pytest.mark.timeout(30)
def test_wrapped_buffer_counts_are_exact(tmp_path):
    buf = three_episodes_wrapped()
    snap = buf.dumps(tmp_path / "s")
    rep = read_manifest(snap)["episode_report"]
    assert rep["headless"] == {"episodes": 1, "steps": 500}
    assert rep["complete"] == {"episodes": 2, "steps": 2000}
    assert rep["open"] == {"episodes": 0, "steps": 0}


@pytest.mark.timeout(30)
def test_open_episode_is_counted_and_carried(tmp_path):
    buf = three_episodes_wrapped(open_tail=100)
    snap = buf.dumps(tmp_path / "s")
    rep = read_manifest(snap)["episode_report"]
    assert rep["open"] == {"episodes": 1, "steps": 100}
    assert rep["headless"] == {"episodes": 1, "steps": 400}
    other = ReplayBuffer(2500, SCHEMA)
    other.loads(tmp_path / "s")
    other.add({"x": np.zeros(1, np.float32), "done": [False], "truncated": [False]})
    last = other.get([(other.cursor - 1) % other.capacity])
    assert last["step"][0] == 100  # the open episode continues after resume


@pytest.mark.timeout(30)
def test_drop_policy_removes_and_counts(tmp_path):
    buf = three_episodes_wrapped(open_tail=100)
    buf.dumps(tmp_path / "s")
    other = ReplayBuffer(2500, SCHEMA)
    rep = other.loads(tmp_path / "s", episode_policy={"headless": "drop", "open": "drop"})
    assert rep["report"]["dropped"] == {"episodes": 2, "steps": 500}
    assert len(other) == 2000
    assert (other.get(np.arange(2000))["step"].reshape(2, 1000) == np.arange(1000)).all()


@pytest.mark.timeout(30)
def test_mark_truncated_policy_flags_the_last_step(tmp_path):
    buf = three_episodes_wrapped(open_tail=100)
    buf.dumps(tmp_path / "s")
    other = ReplayBuffer(2500, SCHEMA)
    rep = other.loads(tmp_path / "s", episode_policy={"open": "mark_truncated"})
    assert rep["report"]["truncated"] == {"episodes": 1, "steps": 100}
    trunc = other.get(np.arange(len(other)))["truncated"]
    assert trunc.sum() == 1 and trunc[len(other) - 1]
    assert other.storage.arrays["_flags"][len(other) - 1] & FLAG_TRUNCATED
    other.add({"x": np.zeros(1, np.float32), "done": [False], "truncated": [False]})
    newest = (other.cursor - 1) % other.capacity
    assert other.get([newest])["step"][0] == 0  # not carried: a new episode starts


@pytest.mark.timeout(30)
def test_bad_policy_is_rejected_before_loading(tmp_path):
    buf = three_episodes_wrapped()
    buf.dumps(tmp_path / "s")
    other = ReplayBuffer(2500, SCHEMA)
    with pytest.raises(ReplayBufferError, match="Bad episode policy"):
        other.loads(tmp_path / "s", episode_policy={"headless": "explode"})
    assert len(other) == 0


@pytest.mark.timeout(30)
@pytest.mark.parametrize("policy", [{"open": "carry"}, {"headless": "drop"}])
def test_a_policy_load_keeps_each_open_episode_in_its_env(tmp_path, policy):
    """Same topology, any policy: env 1's episode (newer than env 0's) stays in env 1, so the
    next add continues both episodes exactly as after a plain exact load."""
    buf = ReplayBuffer(100, num_envs=2, seed=0)
    for t in range(7):
        buf.add({"x": np.array([[t], [100 + t]], np.float32),
                 "done": np.array([False, t == 2])}, env_ids=np.arange(2))
    buf.dumps(tmp_path / "s")
    exact, planned = ReplayBuffer(100, num_envs=2, seed=0), ReplayBuffer(100, num_envs=2, seed=0)
    exact.loads(tmp_path / "s")
    assert planned.loads(tmp_path / "s", episode_policy=policy)["mode"] == "resharded"
    for b in (exact, planned):
        b.add({"x": np.array([[7], [107]], np.float32), "done": np.array([False, False])},
              env_ids=np.arange(2))

    def by_env(b):
        g = b.get(np.arange(len(b)))
        return sorted((int(e), float(x), int(ep), int(s)) for e, x, ep, s in
                      zip(g["env_id"], g["x"][:, 0], g["episode_id"], g["step"]))
    assert by_env(planned) == by_env(exact)
