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
