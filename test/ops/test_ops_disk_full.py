"""archive --copy (and migrate) on a full disk: a clear DiskFullError, no split run, no partial copy.

On a real 8 MiB tmpfs holding 3 runs of ~1.75 MB, with room for one copy: the second run's
copy hits ENOSPC. Before, the error was a ``shutil.Error`` list of tuples per run, and every
remaining run was tried (and failed) too.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from RLA.errors import DiskFullError
from RLA.layout import JOURNAL_DIR
from RLA.ops import plan_archive, plan_migrate, testing
from rla_scripts.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from small_disk import small_disk  # noqa: F401


@pytest.fixture
def full(small_disk: Path) -> Path:  # noqa: F811
    root = small_disk / "data"
    testing.make_database(root, runs=3, files=1, size=350_000)
    return root


def _assert_whole(root: Path, before, target) -> int:
    """Every source intact, every target complete or absent, nothing half; returns the copies."""
    copies = 0
    for run, manifest in before.items():
        assert testing.manifest_of(run) == manifest
        there = target(run)
        if there.existing_paths():
            assert set(testing.manifest_of(there)) == set(manifest), f"{there.relative} is a partial copy"
            copies += 1
    assert not testing._leftovers(root), testing._leftovers(root)
    return copies


@pytest.mark.timeout(120)
def test_archive_copy_on_a_full_disk_is_a_disk_full_error_and_splits_nothing(full, capsys):
    before = {run: testing.manifest_of(run) for run in testing._runs(full)}
    assert main(["archive", "--task", "demo", "--copy", "--yes", "--data-root", str(full)]) == 1
    err = capsys.readouterr().err
    assert "rla archive: error: The disk is full" in err and "free" in err and "(1 of 3 runs done, the others unchanged)" in err, err
    assert "shutil" not in err and "[(" not in err, err
    assert _assert_whole(full, before, lambda run: run.moved(archived=True)) == 1


@pytest.mark.timeout(120)
def test_the_api_raises_disk_full_error_after_moving_the_run_back(full):
    runs = testing._runs(full)
    before = {run: testing.manifest_of(run) for run in runs}
    plan = plan_migrate(full, runs, to_task="moved")
    with pytest.raises(DiskFullError) as caught:
        plan.apply()
    assert caught.value.path.startswith(str(full)) and caught.value.free is not None
    assert [r.result.split(" ")[0] for r in plan.runs] == ["done", "failed", "not"], [r.result for r in plan.runs]
    assert _assert_whole(full, before, lambda run: run.moved(task="moved")) == 1
    assert not list((full / JOURNAL_DIR).glob("*.json"))
    assert plan_archive(full, runs).apply()  # moves need no space: the next operation works
