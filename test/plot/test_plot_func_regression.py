"""plot_func's outputs stay what they were: numbers, CSVs, notes and the drawn figure per case.

The expected snapshots (``plot_func_expected.json``) were computed by the single-function
plot_func on the database ``plot_regression_cases.build_database`` generates; the stages
that replaced it must give the same curves (x, center, bands, counts), final statistics,
files, notes and drawing for every representative call in ``CASES``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from plot_regression_cases import CASES, EXPECTED, build_database, run_case


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_database(tmp_path_factory.mktemp("regression") / "data")


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads(EXPECTED.read_text())


def same(found: Any, wanted: Any, where: str = "") -> None:
    """Equal, floats to 1e-12 relative (numpy builds may differ in the last bit)."""
    if isinstance(wanted, float) and isinstance(found, (int, float)):
        assert math.isclose(found, wanted, rel_tol=1e-12, abs_tol=1e-12), (where, found, wanted)
    elif isinstance(wanted, dict):
        assert isinstance(found, dict) and sorted(found) == sorted(wanted), (where, found, wanted)
        for key in wanted:
            same(found[key], wanted[key], f"{where}.{key}")
    elif isinstance(wanted, list):
        assert isinstance(found, list) and len(found) == len(wanted), (where, found, wanted)
        for i, (f, w) in enumerate(zip(found, wanted)):
            same(f, w, f"{where}[{i}]")
    else:
        assert found == wanted, (where, found, wanted)


def test_every_case_has_a_snapshot(expected):
    assert sorted(expected) == sorted(CASES)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(CASES))
def test_plot_func_gives_the_recorded_outputs(name, database, expected, tmp_path):
    found = run_case(database, tmp_path / name, name)
    wanted = expected[name]
    # The written CSVs are compared as text: the same numbers, written the same way.
    assert found["csv"] == wanted["csv"]
    for part in ("legends", "stats", "g2lf", "score_results", "notes", "files", "figure"):
        same(found[part], wanted[part], part)
