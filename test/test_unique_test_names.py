"""Test modules have unique basenames: the test folders are not packages, so two equal names stop collection."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

TEST_ROOT = Path(__file__).resolve().parent


def test_every_test_module_basename_is_unique():
    names = Counter(path.name for path in TEST_ROOT.rglob("*.py")
                    if path.name != "conftest.py" and "__pycache__" not in path.parts)
    assert [name for name, count in names.items() if count > 1] == []
