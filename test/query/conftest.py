"""A small database of runs for the query tests."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from RLA.query.testing import make_run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """8 current runs (2 envs x 2 algos x 2 seeds) + one legacy, one synced, one backup-only run."""
    root = tmp_path / "data"
    root.mkdir()
    when = dt.datetime(2026, 11, 1, 9, 0, 0)
    i = 0
    for env in ("Hopper", "Walker"):
        for algo in ("sac", "td3"):
            for seed in (0, 1):
                make_run(root, task="mujoco", params={"env": env, "algo": algo, "seed": seed, "lr": 1e-3 * (seed + 1),
                                                       "net": {"hidden": 64}},
                         tracked=["env", "algo", "seed"], curves={"return": [0.0, 10.0 * (i + 1), 5.0 * (i + 1)]},
                         steps=[0, 100, 200], when=when + dt.timedelta(days=i))
                i += 1
    make_run(root, task="mujoco", params={"env": "Ant", "algo": "ppo", "seed": 0, "lr": 0.01},
             curves={"return": [1.0, 2.0]}, style="original", when=dt.datetime(2022, 3, 1, 21, 13, 3, 230208))
    make_run(root, task="mujoco", params={"env": "Ant", "algo": "ppo", "seed": 1, "lr": 0.01},
             curves={"return": [1.0, 3.0]}, style="synced", types=("log",), when=dt.datetime(2022, 3, 2))
    make_run(root, task="other", params={"env": "Ant", "algo": "sac", "seed": 2, "lr": 0.02},
             style="backup", when=dt.datetime(2022, 3, 3))
    return root
