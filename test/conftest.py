"""Fixtures shared by every test folder."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def fresh_global_manager():
    """Every test starts with the global ``exp_manager`` holding no run, no hyper-parameter, no tracked key.

    Tests that use the global instance (as the original's users do) would otherwise leak tracked
    keys into the next test that uses it.
    """
    yield
    tester = sys.modules.get("RLA.easy_log.tester")
    manager = getattr(tester, "exp_manager", None)
    if manager is None:
        return
    manager.finish()
    manager.hyper_param = {}
    manager.clear_record_param()


@pytest.fixture
def minimal_config(tmp_path: Path) -> Path:
    """A project folder with a small rla_config.yaml (csv + log outputs, no framework)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "rla_config.yaml").write_text(
        "LOG_USED: [log, csv]\nDL_FRAMEWORK: none\nHEARTBEAT_INTERVAL: 30\n")
    return project / "rla_config.yaml"


@pytest.fixture
def manager(minimal_config: Path, tmp_path: Path):
    """A fresh ExperimentManager configured on ``tmp_path/data``; finished at teardown."""
    from RLA.manager.experiment import ExperimentManager

    mgr = ExperimentManager()
    mgr.set_hyper_param(env_id="Hopper-v4", lr=0.001, seed=1)
    mgr.add_record_param(["env_id", "seed"])
    mgr.configure("demo_task", rla_config=str(minimal_config), data_root=str(tmp_path / "data"),
                  run_file=[])
    yield mgr
    mgr.finish()


@pytest.fixture
def subprocess_env() -> dict:
    """Environment for child Python processes that import this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["RLA_TEST_PYTHON"] = sys.executable
    return env
