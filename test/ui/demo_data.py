"""A small DQN-like sweep written straight to disk: the dashboard tests' and screenshots' database.

3 learning rates x 3 seeds of ``return``/``loss`` curves, a code snapshot with a git diff,
a results figure, a log, a checkpoint; plus one running run and one crashed run. Hostile
text (``<script>``, ``"><img onerror=...>``) sits in a hyper-parameter value, a note and a
metric name, so every page is also an XSS test.
"""
from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Dict, List

from RLA.annotations import Annotations, write_annotations
from RLA.query.testing import make_run

SCRIPT = "<script>window.__xss=1</script>"
IMG = "\"><img src=x onerror=\"window.__xss=1\">"
#: The payload as a metric name (a progress.csv header cell: no quotes or commas).
IMG_METRIC = "<img src=x onerror=window.__xss=1>"
LRS = (1e-3, 3e-4, 1e-4)
SEEDS = (0, 1, 2)
PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                        "0000000d4944415478da63f8cf00000301010018dd8db00000000049454e44ae426082")


def curve(lr: float, seed: int, points: int = 60) -> Dict[str, List[float]]:
    """A deterministic learning curve: faster for larger lr, a seed-dependent wobble."""
    rate = {1e-3: 0.09, 3e-4: 0.05, 1e-4: 0.025}.get(lr, 0.05)
    ret = [float(round(200 * (1 - math.exp(-rate * i)) + 8 * math.sin(i / 3 + seed) + 3 * seed, 4))
           for i in range(points)]
    loss = [float(round(1.0 / (1 + rate * i) + 0.01 * seed, 5)) for i in range(points)]
    return {"return": ret, "loss": loss}


def _extras(layout, lr: float, seed: int) -> None:
    code = layout.code_dir
    (code / "main.py").write_text(f"LR = {lr!r}\nSEED = {seed}\n\ndef train():\n    return LR * 2\n")
    (code / "git_diff.patch").write_text(
        "diff --git a/main.py b/main.py\n--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n"
        f"-LR = 0.01\n+LR = {lr!r}\n")
    results = layout.results_dir
    results.mkdir(parents=True, exist_ok=True)
    (results / "return_curve.png").write_bytes(PNG_1PX)
    ckpt = layout.checkpoint_dir
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / "checkpoint-000050.pt").write_bytes(b"\0" * 2048)
    (layout.log_dir / "log.txt").write_text("".join(f"[{i:03d}] step {i * 1000} return {i * 3.5:.1f}\n"
                                                    for i in range(60)))


def build(data_root: Path, hostile: bool = True) -> Dict[str, str]:
    """Write the sweep under ``data_root``; returns ``{"first", "running", "crashed", "hostile"}`` indices."""
    when = _dt.datetime(2026, 11, 20, 9, 0, 0)
    out: Dict[str, str] = {}
    for i, (lr, seed) in enumerate((lr, seed) for lr in LRS for seed in SEEDS):
        layout = make_run(data_root, task="dqn/CartPole", params={"algo": "dqn", "lr": lr, "seed": seed,
                                                                  "env": "CartPole-v1"},
                          tracked=["lr", "seed"], curves=curve(lr, seed), steps=[k * 1000 for k in range(60)],
                          when=when + _dt.timedelta(minutes=i))
        _extras(layout, lr, seed)
        out.setdefault("first", layout.index)
        out.setdefault("second", layout.index) if i == 1 else None
    running = make_run(data_root, task="dqn/CartPole", params={"algo": "dqn", "lr": 3e-4, "seed": 7,
                                                               "env": "CartPole-v1"},
                       tracked=["lr", "seed"], curves=curve(3e-4, 7, 30), steps=[k * 1000 for k in range(30)],
                       when=when + _dt.timedelta(minutes=30), status="running")
    out["running"] = running.index
    crashed = make_run(data_root, task="sac/Hopper", params={"algo": "sac", "lr": 3e-4, "seed": 0},
                       curves={"return": [1.0, 2.0, 3.0]}, when=when + _dt.timedelta(minutes=40), status="crashed")
    out["crashed"] = crashed.index
    if hostile:
        bad = make_run(data_root, task="dqn/CartPole", params={"algo": SCRIPT, "lr": 1e-3, "seed": 9,
                                                               "env": IMG},
                       tracked=["algo", "lr", "seed"], curves={"return": [1.0, 2.0], IMG_METRIC: [3.0, 4.0]},
                       when=when + _dt.timedelta(minutes=50))
        write_annotations(bad, Annotations(("xss",), SCRIPT + IMG))
        out["hostile"] = bad.index
        # a task (so an index, a link and a run folder) named by the payload itself
        named = make_run(data_root, task=IMG.replace("/", ""), params={"algo": "dqn", "lr": 1e-3, "seed": 0},
                         curves={"return": [1.0, 2.0]}, when=when + _dt.timedelta(minutes=55))
        out["hostile_task"] = named.index
    return out
