"""One rank of the multi-rank save-path tests, started as its own process (like torchrun).

    python trigger_worker.py SCENARIO STORE OUTDIR RANK WORLD PORT

Every rank adds two items per step (values encode rank and step) and calls
``SaveTriggers.step`` once per step; the scenario makes one rank ask for a save in its own
way. Each rank writes ``OUTDIR/rank-<r>.json``: where it stopped, why, and its rows at each
save, so the test can compare them with the published shards.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from RLA.replay_buffer import ReplayBuffer, SaveTriggers

scenario, store, outdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
rank, world, port = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
dist.init_process_group("gloo", rank=rank, world_size=world)

buf = ReplayBuffer(64, {"v": ((2,), "int64"), "done": ((), "bool")}, rank=rank,
                   world_size=world, num_envs=1, seed=rank)
out = {"rank": rank, "saved": {}, "stopped_at": None, "reason": None}


def record(step: int) -> None:
    out["saved"][str(step)] = buf.get(np.arange(len(buf)))["v"].tolist()


def add(step: int) -> None:
    buf.add({"v": np.array([[rank, step], [rank, step]]), "done": np.array([False, step % 5 == 4])})


def finish() -> None:
    (outdir / f"rank-{rank}.json").write_text(json.dumps(out))


if scenario == "async":  # a background commit next to the training's own collectives
    for step in range(20):
        add(step)
    handle = buf.dumps_async(store, snapshot_id="async")
    record(0)
    if rank == 1:
        time.sleep(0.2)  # this rank's collectives start after the save's have begun
    for k in range(200):
        value = torch.tensor([rank + k], dtype=torch.int64)
        dist.all_reduce(value)
        expected = sum(r + k for r in range(world))
        if int(value.item()) != expected:
            out["reason"] = f"all_reduce {k} gave {int(value.item())}, not {expected}"
            break
    handle.wait()
    out["stopped_at"] = "end"
    finish()
else:
    try:
        with SaveTriggers(buf, store, every=5, timeout=60) as saves:
            for step in range(1, 13):
                add(step)
                if scenario == "request" and rank == 0 and step == 7:
                    saves.request()  # e.g. an HTTP endpoint that only rank 0 serves
                if scenario == "request_file" and rank == world - 1 and step == 8:
                    (store / "SAVE_NOW").touch()
                if scenario == "sigterm" and rank == 2 and step == 6:
                    os.kill(os.getpid(), signal.SIGTERM)  # a preemption notice to one worker
                if scenario == "exception" and rank == 1 and step == 4:
                    raise RuntimeError("injected failure on rank 1")
                record(step)
                if saves.step(step):
                    out["stopped_at"], out["reason"] = step, saves.stop_reason
                    finish()  # rank 2 of the sigterm case ends by its signal in __exit__
                    break
            else:
                out["stopped_at"] = "end"
                finish()
    except RuntimeError as exc:
        record(4)
        out["stopped_at"], out["reason"] = 4, str(exc)
        finish()
        raise
if scenario in ("async", "request", "request_file"):
    dist.barrier()  # every rank is still alive: leave together
dist.destroy_process_group()
