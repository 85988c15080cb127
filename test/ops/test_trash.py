"""rla trash list|restore|empty: restores are whole, journaled and never overwrite a live run."""
from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from RLA.errors import RLAError, RunNotFoundError, UnsafePathError
from RLA.layout import DATA_TYPES, TRASH, RunLayout
from RLA.ops import plan_delete, recover
from RLA.ops.faults import FAULT_STATUS
from RLA.ops.journal import pending_journals
from RLA.ops.testing import fork_cli, make_database, manifest_of, wait
from RLA.ops.trash import find_trashed, list_trash, plan_restore
from RLA.ops.trash_empty import plan_empty
from rla_scripts.cli import main


@pytest.fixture
def db(tmp_path: Path):
    root = tmp_path / "data"
    runs = make_database(root, runs=3, files=2, size=256)
    return root, runs


def delete(root: Path, *runs: RunLayout) -> str:
    plan = plan_delete(root, list(runs))
    plan.apply()
    return plan.op_id


@pytest.mark.timeout(60)
def test_list_shows_each_trashed_run_with_its_types(db, capsys):
    root, runs = db
    stamp = delete(root, runs[0], runs[1])
    items = list_trash(root)
    assert [i.index for i in items] == [runs[0].index, runs[1].index]
    assert all(i.stamp == stamp and set(i.data_types) == set(DATA_TYPES) and i.size() > 0 for i in items)
    assert main(["trash", "list", "--data-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert runs[0].index in out and f".trash/{stamp}" in out and "2 runs in the trash" in out


@pytest.mark.timeout(60)
def test_restore_brings_every_data_type_back_and_leaves_no_folder(db, capsys):
    root, runs = db
    before = manifest_of(runs[0])
    stamp = delete(root, runs[0])
    assert manifest_of(runs[0]) == {}
    assert main(["trash", "restore", runs[0].record_date, "--data-root", str(root), "--yes"]) == 0
    assert manifest_of(runs[0]) == before
    assert not (root / TRASH / stamp).exists() and list_trash(root) == []
    assert "restore: 1 run" in capsys.readouterr().out  # the done line is printed by _common.py


@pytest.mark.timeout(60)
def test_restore_of_an_archived_run_goes_back_to_arc(db):
    root, runs = db
    assert main(["archive", runs[2].record_date, "--data-root", str(root), "--yes"]) == 0
    archived = runs[2].moved(archived=True)
    before = manifest_of(archived)
    delete(root, archived)
    [item] = list_trash(root)
    assert item.layout.archived
    plan_restore(root, [item]).apply()
    assert manifest_of(archived) == before and manifest_of(runs[2]) == {}


@pytest.mark.timeout(60)
def test_restore_refuses_a_run_that_exists_again(db, capsys):
    root, runs = db
    delete(root, runs[0])
    runs[0].log_dir.mkdir(parents=True)  # the run's place is taken again (recreated, copied back ...)
    (runs[0].log_dir / "progress.csv").write_text("x\n1\n")
    assert main(["trash", "restore", runs[0].record_date, "--data-root", str(root), "--yes"]) == 1
    captured = capsys.readouterr()
    assert "exists again" in captured.out and "nothing to restore" in captured.err
    assert (runs[0].log_dir / "progress.csv").read_text() == "x\n1\n"
    assert not runs[0].code_dir.exists(), "no data type of the trashed run was moved"
    assert set(list_trash(root)[0].data_types) == set(DATA_TYPES)


@pytest.mark.timeout(60)
def test_restore_checks_the_live_run_again_under_the_lock(db):
    root, runs = db
    stamp = delete(root, runs[0])
    # the trashed copy has no checkpoint folder, so only the live-run check sees the new one
    shutil.rmtree(runs[0].moved(data_root=root / TRASH / stamp).checkpoint_dir)
    plan = plan_restore(root, find_trashed(root, [runs[0].index]))
    assert plan.ready, "nothing in the way when planned"
    runs[0].checkpoint_dir.mkdir(parents=True)  # appears between the plan and apply
    [result] = plan.apply()
    assert result.result.startswith("skipped") and "exists again" in result.result
    assert not runs[0].log_dir.exists()


@pytest.mark.timeout(60)
def test_a_run_in_two_trash_folders_needs_from(db):
    root, runs = db
    first = delete(root, runs[0])
    # a second copy of the same run in another trash folder (e.g. restored by hand, deleted again)
    second = "20261125-100000-1-abcdef"
    shutil.copytree(root / TRASH / first, root / TRASH / second, symlinks=True)
    with pytest.raises(RunNotFoundError, match="in the trash 2 times") as info:
        find_trashed(root, [runs[0].index])
    assert "--from" in str(info.value)
    assert main(["trash", "restore", runs[0].index, "--from", first, "--data-root", str(root), "--yes"]) == 0
    assert runs[0].log_dir.is_dir() and [i.stamp for i in list_trash(root)] == [second]


@pytest.mark.timeout(60)
def test_restore_needs_a_selector_and_refuses_unsafe_names(db, capsys):
    root, runs = db
    delete(root, runs[0])
    assert main(["trash", "restore", "--data-root", str(root), "--yes"]) == 1
    assert "No runs named" in capsys.readouterr().err
    with pytest.raises(UnsafePathError):
        find_trashed(root, stamp="../data")
    with pytest.raises(UnsafePathError):
        find_trashed(root, ["../../x"])
    assert runs[0].log_dir.exists() is False


@pytest.mark.timeout(60)
def test_a_linked_trash_is_refused(db, tmp_path):
    root, runs = db
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / TRASH).symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        list_trash(root)
    with pytest.raises(UnsafePathError):
        plan_empty(root)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", ["journal-written", "step-done:1", "step-done:3", "before-journal-removed"])
def test_a_restore_killed_half_way_is_finished_whole(db, fault):
    root, runs = db
    before = manifest_of(runs[0])
    delete(root, runs[0])
    status = wait(fork_cli(root, ["trash", "restore", runs[0].record_date, "--yes"], fault))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == FAULT_STATUS
    assert pending_journals(root), "the interrupted restore left its journal"
    recover(root)
    assert manifest_of(runs[0]) == before and list_trash(root) == []
    assert not pending_journals(root)


@pytest.mark.timeout(60)
def test_empty_asks_first_and_removes_everything_with_yes(db, capsys, monkeypatch):
    root, runs = db
    delete(root, runs[0])
    delete(root, runs[1])
    monkeypatch.setattr("sys.stdin", None)
    assert main(["trash", "empty", "--data-root", str(root)]) == 1
    assert "Confirmation needed" in capsys.readouterr().err and len(list_trash(root)) == 2
    assert main(["trash", "empty", "--data-root", str(root), "--dry-run"]) == 0
    assert "2 trash folders to remove" in capsys.readouterr().out and len(list_trash(root)) == 2
    assert main(["trash", "empty", "--data-root", str(root), "--yes"]) == 0
    assert list_trash(root) == [] and os.listdir(root / TRASH) == []
    assert manifest_of(runs[2]) != {}, "live runs untouched"


@pytest.mark.timeout(60)
def test_empty_older_than_keeps_recent_deletions(db):
    root, runs = db
    recent = delete(root, runs[0])
    old = delete(root, runs[1])
    os.rename(root / TRASH / old, root / TRASH / "20200101-000000-1-abc123")
    plan = plan_empty(root, older_than=30, now=dt.datetime(2026, 11, 25))
    assert [f.name for f in plan.folders] == ["20200101-000000-1-abc123"]
    assert plan.apply() == ["20200101-000000-1-abc123"]
    assert [i.stamp for i in list_trash(root)] == [recent]
    with pytest.raises(RLAError, match="older-than"):
        plan_empty(root, older_than=-1)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", ["journal-written", "staged", "step-done:1"])
def test_an_empty_killed_half_way_is_finished_by_the_next_operation(db, fault):
    root, runs = db
    delete(root, runs[0])
    delete(root, runs[1])
    status = wait(fork_cli(root, ["trash", "empty", "--yes"], fault))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == FAULT_STATUS
    assert pending_journals(root)
    assert len(list_trash(root)) <= 2  # a folder being removed is hidden, never a half run
    recover(root)
    assert list_trash(root) == [] and os.listdir(root / TRASH) == [] and not pending_journals(root)


@pytest.mark.timeout(60)
def test_dashboard_undelete_uses_the_trash_restore(db):
    from RLA.ui.actions import run_action

    root, runs = db
    before = manifest_of(runs[1])
    delete(root, runs[1])
    planned = run_action(root, "undelete", [runs[1].index], confirm=False)
    assert "from .trash/" in planned["plan"] and not planned["applied"] and manifest_of(runs[1]) == {}
    done = run_action(root, "undelete", [runs[1].index], confirm=True)
    assert done["runs"][0]["result"] == "done" and manifest_of(runs[1]) == before
