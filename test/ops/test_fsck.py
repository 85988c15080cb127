"""`rla fsck` reports pending journals, fragments, split runs and partial copies; --repair
finishes journals and removes partial copies; fragments are found by list and delete."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from RLA.layout import DATA_TYPES, JOURNAL_DIR, iter_run_dirs
from RLA.ops import testing
from RLA.ops.fsck import repair, scan
from RLA.ops.lock import OperationBusyError, OpsLock
from RLA.query.testing import make_run
from rla_scripts.cli import main


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for i in range(3):
        make_run(root, task="demo", params={"seed": i}, when=dt.datetime(2026, 11, 1, 10, 0, i), types=DATA_TYPES)
    return root


def fragment(db: Path, types=("results",)):
    """A run left with only ``types`` (its other data types removed)."""
    run = next(iter_run_dirs(db, "log", task="demo"))
    for data_type in DATA_TYPES:
        if data_type not in types:
            path = run.path(data_type)
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return run


@pytest.mark.timeout(60)
def test_a_results_only_fragment_is_listed_flagged_and_deletable(db, capsys):
    run = fragment(db)
    (run.results_dir / "fig.png").write_bytes(b"png")
    assert main(["list", "--data-root", str(db), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1 + 3
    assert f"run {run.index} is a fragment: only results (no log/, code/)" in err
    assert main(["fsck", "--data-root", str(db)]) == 1
    assert f"fragment  {run.relative}: only under results (no log/, code/)" in capsys.readouterr().out
    assert main(["delete", run.index, "--yes", "--data-root", str(db)]) == 0
    assert not run.results_dir.exists()
    assert list((db / ".trash").rglob("fig.png"))
    assert main(["fsck", "--data-root", str(db)]) == 0


@pytest.mark.timeout(60)
def test_fsck_repair_never_deletes_a_fragment(db, capsys):
    run = fragment(db, types=("checkpoint", "code"))
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 1
    assert run.checkpoint_dir.is_dir() and run.code_dir.is_dir()
    assert "fragment" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_a_partial_copy_is_reported_then_removed_by_repair(db, capsys):
    run = next(iter_run_dirs(db, "log", task="demo"))
    part = run.log_dir.parent / ".rla-20261125-101010-123-abcdef.part.0123456789ab"
    part.mkdir()
    (part / "progress.csv").write_text("half")
    report = scan(db)
    assert [f.kind for f in report.findings] == ["partial"]
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 0
    assert not part.exists()
    assert "removed the incomplete copy" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_a_to_be_deleted_folder_without_journal_is_reported_not_removed(db):
    run = next(iter_run_dirs(db, "log", task="demo"))
    gone = run.log_dir.parent / ".rla-20261125-101010-123-abcdef.gone.0123456789ab"
    gone.mkdir()
    report = repair(db)
    assert gone.is_dir() and [f.kind for f in report.findings] == ["partial"]


@pytest.mark.timeout(60)
def test_a_run_split_between_active_and_arc_is_reported(db):
    run = next(iter_run_dirs(db, "log", task="demo"))
    archived = run.moved(archived=True)
    archived.checkpoint_dir.parent.mkdir(parents=True)
    os.rename(run.checkpoint_dir, archived.checkpoint_dir)
    kinds = sorted(f.kind for f in scan(db).findings)
    assert kinds == ["fragment", "split"]


@pytest.mark.timeout(60)
def test_a_run_split_between_root_and_trash_is_reported(db):
    run = next(iter_run_dirs(db, "log", task="demo"))
    trashed = run.moved(data_root=db / ".trash" / "20261125-000000-1")
    trashed.log_dir.parent.mkdir(parents=True)
    os.rename(run.log_dir, trashed.log_dir)
    findings = scan(db).findings
    assert {f.kind for f in findings} == {"fragment", "split"}
    assert any("in .trash/20261125-000000-1" in f.detail for f in findings)


@pytest.mark.timeout(120)
def test_a_pending_journal_is_reported_warned_and_finished(db, tmp_path, capsys):
    testing.warm_up(db)
    status = testing.wait(testing.fork_op(db, "archive", "step-done:3"))
    assert os.WEXITSTATUS(status) == 86
    assert [f.kind for f in scan(db).findings if f.kind == "journal"] == ["journal"]
    assert main(["list", "--data-root", str(db), "--all"]) == 0
    assert "1 interrupted operation pending" in capsys.readouterr().err
    assert main(["archive", "--task", "demo", "--yes", "--dry-run", "--data-root", str(db)]) == 0
    assert len(os.listdir(db / JOURNAL_DIR)) == 2  # a dry run changes nothing
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 0
    assert "repaired: finished the interrupted archive of 3 runs" in capsys.readouterr().out
    assert len(list(iter_run_dirs(db, "log", archived=True))) == 3
    assert main(["fsck", "--data-root", str(db)]) == 0


@pytest.mark.timeout(60)
def test_an_unreadable_journal_is_reported_and_kept(db, capsys):
    (db / JOURNAL_DIR).mkdir()
    (db / JOURNAL_DIR / "x.json").write_text("{broken")
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 1
    assert "unreadable" in capsys.readouterr().out and (db / JOURNAL_DIR / "x.json").exists()


@pytest.mark.timeout(60)
def test_the_next_operation_finishes_a_pending_journal_first(db):
    from RLA.ops import plan_delete
    testing.warm_up(db)
    testing.wait(testing.fork_op(db, "migrate --move", "step-done:8"))
    moved = list(iter_run_dirs(db, "log", task=testing.TARGET_TASK))
    plan = plan_delete(db, moved)
    plan.apply()
    assert plan.recovery is not None and plan.recovery.finished[0].startswith("finished the interrupted move")
    assert [r.result for r in plan.runs].count("done") == len(moved)
    assert not list(iter_run_dirs(db, "code", task="demo"))  # the move was finished, then deleted
    assert scan(db).findings == []


@pytest.mark.timeout(60)
def test_a_blocked_destination_moves_the_run_back(db, capsys):
    testing.warm_up(db)
    testing.wait(testing.fork_op(db, "archive", "step-done:1"))  # archive_tester of run 1 moved
    run = next(iter_run_dirs(db, "log", task="demo"))
    squatter = run.moved(archived=True).checkpoint_dir
    squatter.mkdir(parents=True)
    (squatter / "mine.txt").write_text("someone else's")
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 1  # the squatter is a fragment under arc/
    out = capsys.readouterr().out
    assert "moved back to where it was" in out
    assert set(run.existing_paths()) == set(DATA_TYPES)
    assert (squatter / "mine.txt").read_text() == "someone else's"


@pytest.mark.timeout(60)
def test_an_operation_waits_for_the_lock(db):
    testing.warm_up(db)
    lock = OpsLock(db).acquire()
    try:
        pid = testing.fork_op(db, "delete")
        time.sleep(1.0)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still waiting
        assert len(list(iter_run_dirs(db, "log"))) == 3
        with pytest.raises(OperationBusyError, match="held by pid"):
            OpsLock(db, timeout=0.1).acquire()
    finally:
        lock.close()
    assert os.WEXITSTATUS(testing.wait(pid)) == 0
    assert not list(iter_run_dirs(db, "log"))


@pytest.mark.timeout(120)
def test_two_operations_at_once_keep_every_run_whole(db):
    testing.warm_up(db)
    before = {run: testing.manifest_of(run) for run in iter_run_dirs(db, "log", task="demo")}
    pids = [testing.fork_op(db, "archive"), testing.fork_op(db, "delete")]
    assert [os.WEXITSTATUS(testing.wait(pid)) for pid in pids].count(0) >= 1
    assert scan(db).findings == []
    for run, manifest in before.items():
        homes = [p for p in testing.places(db, run).values() if p.log_dir.is_dir()]
        assert len(homes) == 1 and testing.manifest_of(homes[0]) == manifest


@pytest.mark.timeout(60)
def test_journal_lists_every_step_before_the_first_move(db):
    testing.warm_up(db)
    testing.wait(testing.fork_op(db, "migrate", "journal-written"))
    (path,) = (db / JOURNAL_DIR).glob("*.json")
    journal = json.loads(path.read_text())
    assert journal["action"] == "copy" and len(journal["runs"]) == 3
    assert all(len(run["steps"]) == len(DATA_TYPES) and run["rewrite"] for run in journal["runs"])
    assert not list(iter_run_dirs(db, "log", task=testing.TARGET_TASK))


@pytest.mark.timeout(60)
def test_trashed_files_of_a_data_type_the_run_keeps_are_not_a_split(db):
    """Resuming trashes the checkpoints saved after the restored step, file by file."""
    from RLA.fs import move_to_trash
    run = next(iter_run_dirs(db, "log", task="demo"))
    (run.checkpoint_dir / "checkpoint-5.pt").write_bytes(b"x")
    move_to_trash(run.checkpoint_dir / "checkpoint-5.pt", db)
    assert scan(db).findings == []


@pytest.mark.timeout(60)
def test_an_archive_copy_is_not_a_split(db):
    assert main(["archive", "--task", "demo", "--copy", "--yes", "--data-root", str(db)]) == 0
    assert scan(db).findings == []


@pytest.mark.timeout(60)
def test_move_to_trash_refuses_a_linked_trash(db, tmp_path):
    from RLA.errors import UnsafePathError
    from RLA.fs import move_to_trash
    outside = tmp_path / "outside"
    outside.mkdir()
    (db / ".trash").symlink_to(outside)
    run = next(iter_run_dirs(db, "log", task="demo"))
    (run.checkpoint_dir / "checkpoint-5.pt").write_bytes(b"x")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        move_to_trash(run.checkpoint_dir / "checkpoint-5.pt", db)
    assert (run.checkpoint_dir / "checkpoint-5.pt").exists() and not list(outside.iterdir())


@pytest.mark.timeout(60)
def test_a_run_without_its_code_folder_is_a_fragment(db, capsys):
    """A copy cut short before code/ arrived keeps log/ (and run.json): still a fragment."""
    run = fragment(db, types=("log", "archive_tester"))
    assert main(["list", "--data-root", str(db)]) == 0
    assert f"run {run.index} is a fragment: only archive_tester, log (no code/)" in capsys.readouterr().err
    assert [(f.kind, f.where) for f in scan(db).findings] == [("fragment", run.relative)]


@pytest.mark.timeout(60)
def test_repair_removes_an_unfinished_journal_write(db, capsys):
    (db / JOURNAL_DIR).mkdir()
    temp = db / JOURNAL_DIR / ".20261125-101010-1-abcdef.json.x1y2.tmp"
    temp.write_text('{"format_version": 1, "act')
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 0
    assert not temp.exists() and "removed the unfinished journal" in capsys.readouterr().out


@pytest.mark.timeout(120)
def test_a_repair_killed_half_way_is_finished_by_the_next_one(db):
    testing.warm_up(db)
    before = {run: testing.manifest_of(run) for run in iter_run_dirs(db, "log", task="demo")}
    testing.wait(testing.fork_op(db, "archive", "step-done:5"))
    status = testing.wait(testing.fork_cli(db, ["fsck", "--repair"], "step-done:4"))
    assert os.WEXITSTATUS(status) == 86  # the repair itself was stopped
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 0
    for run, manifest in before.items():
        assert testing.manifest_of(run.moved(archived=True)) == manifest
        assert not run.existing_paths()
