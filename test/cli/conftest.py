"""A small database for the CLI tests (shared with the query tests' layout)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from RLA.query.testing import make_run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """4 runs of task 'demo' with every data type, one legacy run of the original project."""
    root = tmp_path / "data"
    root.mkdir()
    for i, (algo, seed) in enumerate([("sac", 0), ("sac", 1), ("td3", 0), ("td3", 1)]):
        make_run(root, task="demo", params={"algo": algo, "seed": seed, "lr": 1e-3},
                 curves={"return": [0.0, float(i + 1)]}, when=dt.datetime(2026, 11, 1, 10, 0, i),
                 types=("log", "code", "checkpoint", "results", "replay", "archive_tester"))
    make_run(root, task="demo", params={"algo": "ppo", "seed": 0, "lr": 0.01}, curves={"return": [5.0]},
             style="original", when=dt.datetime(2022, 3, 1, 21, 13, 3, 230208))
    return root
