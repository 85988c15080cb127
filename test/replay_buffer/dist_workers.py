"""Rank functions for the torch.distributed (gloo, CPU) snapshot tests."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


def _init(rank: int, world: int, port: int) -> None:
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)


def _buffer(rank: int, world: int, capacity: int = 400):
    from RLA.replay_buffer import ReplayBuffer
    return ReplayBuffer(capacity, {"obs": ((4,), "float32"), "done": ((), "bool")},
                        sampler="prioritized", num_envs=3, rank=rank, world_size=world,
                        seed=100 + rank, segment_bytes=1024)


def save_ranks(rank: int, world: int, port: int, store: str, fail_rank: int) -> None:
    """Every rank fills its shard, saves sync + async, then a save where one rank fails."""
    import torch.distributed as dist
    from RLA.errors import ReplayBufferError
    _init(rank, world, port)
    buf = _buffer(rank, world)
    rng = np.random.default_rng(rank)
    for _ in range(60 + 25 * rank):
        buf.add({"obs": rng.random((3, 4)).astype(np.float32), "done": rng.random(3) < 0.08},
                env_ids=[0, 1, 2])
    _, idx, _ = buf.sample(50)
    buf.update_priority(idx, rng.random(50) * 3)
    buf.dumps(store, snapshot_id="periodic")
    handle = buf.dumps_async(store, snapshot_id="requested")
    handle.wait()
    dump = {"len": len(buf), "rows": _rows(buf)}
    Path(store, f"expected-{rank}.json").write_text(json.dumps(dump))
    if fail_rank >= 0:
        if rank == fail_rank:  # inject a disk failure into this rank's phase 1
            from RLA.replay_buffer.snapshot import save as save_mod

            def broken(*args, **kwargs):
                raise OSError(28, "No space left on device (injected)")
            save_mod.write_shard = broken
        try:
            buf.dumps(store, snapshot_id="broken")
            outcome = "published"
        except (ReplayBufferError, Exception) as exc:  # noqa: BLE001
            outcome = type(exc).__name__
        Path(store, f"outcome-{rank}.txt").write_text(outcome)
    dist.barrier()
    dist.destroy_process_group()


def load_ranks(rank: int, world: int, port: int, store: str, snapshot: str) -> None:
    import torch.distributed as dist
    _init(rank, world, port)
    buf = _buffer(rank, world, capacity=800)
    report = buf.loads(store, snapshot=snapshot, rank=rank, world_size=world)
    out = {"len": len(buf), "rows": _rows(buf), "num_envs": buf.num_envs,
           "env_ids": buf.get(np.arange(len(buf)))["env_id"].tolist(), "report": report["report"]}
    Path(store, f"loaded-{world}-{rank}.json").write_text(json.dumps(out))
    dist.barrier()
    dist.destroy_process_group()


def _rows(buf) -> list:
    n = len(buf)
    if not n:
        return []
    g = buf.get(np.arange(n))
    p = np.asarray(buf.priority(np.arange(n)))
    return sorted([int(g["episode_id"][i]), int(g["step"][i]), g["obs"][i].tobytes().hex(),
                   p[i].tobytes().hex()] for i in range(n))
