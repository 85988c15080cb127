"""A small database of complete runs, copied fresh for every trial (see RLA.ops.testing)."""
from __future__ import annotations

from pathlib import Path

import pytest

from RLA.ops import testing



@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 runs of task 'demo', every data type, 3 files of 4 KiB in each folder; the commands
    are imported once so forked children spend their time on the operation."""
    root = tmp_path_factory.mktemp("template")
    testing.make_database(root, runs=testing.DEFAULT_RUNS)
    testing.warm_up(root)
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path
