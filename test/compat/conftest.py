"""Fixtures of the compatibility tests: databases in the original RLA's formats."""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from _legacy_tree import build_database


@pytest.fixture
def legacy_db(tmp_path: Path) -> Path:
    root = tmp_path / "db"
    build_database(root)
    return root


@pytest.fixture
def legacy_runs(tmp_path: Path) -> Dict[str, Dict[str, Path]]:
    return build_database(tmp_path / "db2")


@pytest.fixture
def global_run(tmp_path: Path):
    """The global ``exp_manager`` (the original's ``tester``) with a torch run under ``tmp_path/data``."""
    from RLA.easy_log import logger
    from RLA.easy_log.tester import exp_manager

    config = tmp_path / "rla_config.yaml"
    config.write_text("LOG_USED: [log, csv]\nDL_FRAMEWORK: torch\n")
    exp_manager.set_hyper_param(env_id="Test-v1", learning_rate=0.01, seed=3)
    exp_manager.clear_record_param()
    exp_manager.add_record_param(["learning_rate"])
    exp_manager.configure("demo_task", rla_config=str(config), data_root=str(tmp_path / "data"), run_file=[])
    exp_manager.log_files_gen()
    logger.set_time(0)
    yield exp_manager
    exp_manager.finish()
    exp_manager.clear_record_param()  # the global manager is shared with other test folders
    exp_manager.set_hyper_param()
