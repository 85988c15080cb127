"""The training function of test_submitit.py (shipped to submitit's job by value)."""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any, Dict

import numpy as np

from RLA.easy_log import logger
from RLA.replay_buffer import ReplayBuffer

SIGNAL_STEP = 10   # the step during which the test sends the preemption signal


def digest(buffer: ReplayBuffer) -> str:
    """A hash of every stored transition, the cursor and the buffer's own RNG draw."""
    h = hashlib.sha256(f"{len(buffer)}/{buffer.cursor}".encode())
    if len(buffer):
        items = buffer.get(np.arange(len(buffer)))
        for key in sorted(items):
            h.update(key.encode() + np.ascontiguousarray(np.asarray(items[key])).tobytes())
    return h.hexdigest()[:16]


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def train(ctx: Any) -> Dict[str, Any]:
    """Each step adds w += 1 twice (the preemption signal arrives between the two in step 10)."""
    params = ctx.manager.hyper_param
    folder = Path(params["handshake"])
    buffer = ReplayBuffer(64, schema={"obs": ((2,), "float32"), "done": ((), "bool")}, seed=params["seed"])
    start = ctx.restore(buffer=buffer, variables={"w": np.zeros(2)})
    restored = {"restored_step": start - 1, "restored_digest": digest(buffer)} if start else {}
    if not start:
        np.random.seed(params["seed"])  # a requeued job gets the saved RNG state back instead
    for step in ctx.steps(start, params["steps"]):
        ctx.variables["w"] = ctx.variables["w"] + 1.0
        if step == SIGNAL_STEP and not (folder / "signalled").exists():
            (folder / "in_step").write_text(str(os.getpid()))  # the test signals this process now
            _wait_for(folder / "signalled", 30.0)
            time.sleep(0.2)                              # the signal is delivered inside this step
        ctx.variables["w"] = ctx.variables["w"] + 1.0
        buffer.add({"obs": np.full((1, 2), step, np.float32), "done": np.array([step % 7 == 6])})
        logger.record_tabular("w", float(ctx.variables["w"][0]))
        logger.record_tabular("draw", float(np.random.random()))
        logger.dump_tabular()
    return dict(restored, final_w=float(ctx.variables["w"][0]), digest=digest(buffer))
