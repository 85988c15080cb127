"""The tiny Tune trainable of test_ray_tune.py (shipped to Ray's workers by value)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import numpy as np

from RLA.integrations import ray_tune as rla_tune

STEPS = 8
FAIL_AT = 6        # the failing trial raises before reporting this step, once
CHECKPOINT_EVERY = 2


def train(config: Dict[str, Any]) -> None:
    """w += lr each step; a checkpoint every 2 steps; one trial fails once at step 6."""
    step, models, _ = rla_tune.restore()
    w = models["w"] if models else np.zeros(2)
    start = 1 if step is None else step + 1
    for it in range(start, STEPS + 1):
        marker = Path(config["fail_marker"])
        if config["seed"] == 1 and config["lr"] == 0.1 and it == FAIL_AT and not marker.exists():
            marker.touch()
            raise RuntimeError("injected failure at step 6")
        w = w + config["lr"]
        ckpt = {"w": w} if it % CHECKPOINT_EVERY == 0 else None
        rla_tune.report({"score": float(w.sum()), "seed_x": config["seed"]}, step=it, checkpoint=ckpt)
