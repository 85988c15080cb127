"""Shared builders and comparisons for the replay-buffer tests."""
from __future__ import annotations

import collections
from typing import Any, Dict, List

import numpy as np

from RLA.replay_buffer import ReplayBuffer

SAMPLERS = ["uniform", "prioritized", "without_replacement", "sequence"]
SCHEMA = {"obs": ((3,), "float32"), "next": {"obs": ((3,), "float32")}, "act": ((), "int64"),
          "done": ((), "bool"), "tag": ((), "<U4")}


def make(capacity: int = 64, sampler: str = "uniform", storage: str = "ram", tmp=None,
         num_envs: int = 2, seed: int = 0, segment_bytes: int = 512, **kw: Any) -> ReplayBuffer:
    opts = {"seq_len": 3} if sampler == "sequence" else None
    sopts = {"directory": str(tmp)} if storage == "memmap" and tmp is not None else None
    return ReplayBuffer(capacity, SCHEMA, sampler=sampler, sampler_options=opts, storage=storage,
                        storage_options=sopts, num_envs=num_envs, seed=seed,
                        segment_bytes=segment_bytes, **kw)


def batch(rng: np.random.Generator, n: int, done_p: float = 0.1) -> Dict[str, Any]:
    obs = rng.random((n, 3)).astype(np.float32)
    return {"obs": obs, "next": {"obs": obs + 1}, "act": rng.integers(0, 9, n),
            "done": rng.random(n) < done_p, "tag": np.array([f"t{i % 7}" for i in range(n)])}


def fill(buf: ReplayBuffer, steps: int, seed: int = 1, touch_priorities: bool = True) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        buf.add(batch(rng, buf.num_envs), env_ids=np.arange(buf.num_envs))
    if touch_priorities and buf.sampler_kind == "prioritized" and len(buf):
        idx = rng.integers(0, len(buf), 16)
        buf.update_priority(idx, rng.random(16) * 5)


def assert_same_state(a: ReplayBuffer, b: ReplayBuffer) -> None:
    assert (len(a), a.capacity, a.cursor, a.write_count) == (len(b), b.capacity, b.cursor,
                                                            b.write_count)
    n = len(a)
    for name, arr in a.storage.arrays.items():
        other = b.storage.arrays[name]
        assert arr.dtype == other.dtype and arr.shape == other.shape, name
        assert arr[:n].tobytes() == other[:n].tobytes(), name
    pa, pb = a.priority(np.arange(n)), b.priority(np.arange(n))
    assert np.asarray(pa).tobytes() == np.asarray(pb).tobytes()
    assert np.array_equal(a.episodes.current, b.episodes.current)
    assert np.array_equal(a.episodes.step, b.episodes.step)
    assert a.episodes.next_counter == b.episodes.next_counter


def multiset(buffers: List[ReplayBuffer]) -> collections.Counter:
    """Transitions as (episode id, step, payload bytes, priority bits)."""
    out: collections.Counter = collections.Counter()
    for buf in buffers:
        n = len(buf)
        if not n:
            continue
        g = buf.get(np.arange(n))
        p = np.asarray(buf.priority(np.arange(n)))
        for i in range(n):
            out[(int(g["episode_id"][i]), int(g["step"][i]), g["obs"][i].tobytes(),
                 g["next"]["obs"][i].tobytes(), int(g["act"][i]), p[i].tobytes())] += 1
    return out
