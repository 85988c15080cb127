"""Names from the user are checked: a task, run or target with '..', a leading '/' or an
empty component is refused by every command and API, and links out of the data root are
refused, not followed."""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from RLA.errors import UnsafePathError
from RLA.layout import DATA_TYPES, RunLayout, find_run, find_runs, iter_run_dirs
from RLA.query.testing import make_run
from rla_scripts.cli import main

BAD = ["..", "../demo", "/abs", "/", "a//b", "", "demo/..", "demo/../demo", "demo/", "./demo"]
COMMANDS = [["list"], ["delete", "--yes"], ["delete", "--purge", "--yes"], ["archive", "--yes"],
            ["archive", "--copy", "--yes"], ["migrate", "--to-task", "t2", "--yes"], ["view"], ["path"]]


def snapshot(root: Path) -> dict:
    """Every path under ``root`` with its size (directories: None)."""
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.stat().st_size)
            for p in sorted(root.rglob("*")) if ".rla_index" not in p.name}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for i in range(2):
        make_run(root, task="demo", params={"seed": i}, when=dt.datetime(2026, 11, 1, 10, 0, i), types=DATA_TYPES)
    make_run(root, task="other", params={"seed": 9}, when=dt.datetime(2026, 11, 1, 11, 0, 0), types=DATA_TYPES)
    return root


def _argv(command, db, *extra):
    head = command[:1] + (["demo/2026/11/01/10-00-00"] if command[0] in ("view", "path") and not extra else [])
    return head + command[1:] + ["--data-root", str(db)] + list(extra)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("bad", BAD)
def test_every_command_refuses_a_bad_task(command, bad, db, capsys):
    before = snapshot(db)
    status = main(_argv(command, db, "--task", bad) if command[0] not in ("view", "path") else
                  [command[0], "demo/2026/11/01/10-00-00", "--task", bad, "--data-root", str(db)])
    err = capsys.readouterr().err
    assert status != 0 and "refused" in err and "Traceback" not in err, err
    assert snapshot(db) == before


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("bad", ["../x", "/abs/2026", "demo//2026", "demo/2026/../../x"])
def test_every_command_refuses_a_bad_run_selector(command, bad, db, capsys):
    before = snapshot(db)
    argv = [command[0], bad] + command[1:] + ["--data-root", str(db)]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "refused" in err and "Traceback" not in err, err
    assert snapshot(db) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", BAD)
def test_migrate_refuses_a_bad_target_task(bad, db, capsys):
    before = snapshot(db)
    assert main(["migrate", "--task", "demo", "--to-task", bad, "--yes", "--data-root", str(db)]) != 0
    assert "refused" in capsys.readouterr().err
    assert snapshot(db) == before


@pytest.mark.timeout(60)
def test_purge_with_task_dotdot_removes_nothing(db, capsys):
    """The issue: `--task ..` reached every data type's folder and purged every run."""
    before = snapshot(db)
    assert main(["delete", "--task", "..", "--purge", "--yes", "--data-root", str(db)]) == 1
    assert "The task '..' is refused" in capsys.readouterr().err
    assert snapshot(db) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", BAD)
def test_every_api_refuses_a_bad_task(bad, db):
    from RLA.ops import plan_archive, plan_delete, plan_migrate
    from RLA.query import list_runs, select_runs
    from RLA.query.tree import discover

    good = next(iter_run_dirs(db, "log", task="demo"))
    run = RunLayout(db, bad, good.date, good.name)
    calls = [lambda: select_runs(db, task=bad), lambda: list_runs(db, task=bad),
             lambda: list(iter_run_dirs(db, "log", task=bad)), lambda: find_runs(db, "2026", task=bad),
             lambda: discover(db, task=bad), lambda: plan_delete(db, [run]),
             lambda: plan_delete(db, [run], purge=True), lambda: plan_archive(db, [run]),
             lambda: plan_migrate(db, [run], to_task="t2"), lambda: plan_migrate(db, [good], to_task=bad)]
    before = snapshot(db)
    for call in calls:
        with pytest.raises(UnsafePathError, match="refused"):
            call()
    assert snapshot(db) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", ["../x", "/abs", "a//b"])
def test_find_run_refuses_a_bad_selector(bad, db):
    with pytest.raises(UnsafePathError, match="refused"):
        find_run(db, bad)


@pytest.mark.timeout(60)
def test_plans_refuse_a_bad_run_name_or_date(db):
    from RLA.ops import plan_delete
    good = next(iter_run_dirs(db, "log", task="demo"))
    for run in (RunLayout(db, "demo", good.date, ".."), RunLayout(db, "demo", "2026/11/../..", good.name)):
        with pytest.raises(UnsafePathError, match="refused"):
            plan_delete(db, [run])


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "keep.txt").write_text("not RLA's")
    return outside


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["delete", "--yes"], ["delete", "--purge", "--yes"], ["archive", "--yes"],
                                     ["archive", "--copy", "--yes"], ["migrate", "--to-task", "t2", "--yes"]],
                         ids=lambda c: " ".join(c))
def test_a_linked_task_folder_is_refused_not_followed(command, db, tmp_path, capsys):
    outside = _outside(tmp_path)
    results_task = db / "results" / "demo"
    os.rename(results_task, outside / "demo")
    results_task.symlink_to(outside / "demo")
    before_out, before = snapshot(outside), snapshot(db)
    assert main(command[:1] + ["--regex", "*"] + command[1:] + ["--data-root", str(db)]) != 0
    err = capsys.readouterr().err
    assert "is a symbolic link" in err and "Traceback" not in err, err
    assert snapshot(outside) == before_out and snapshot(db) == before


@pytest.mark.timeout(60)
def test_task_option_on_a_linked_task_folder_is_refused(db, tmp_path, capsys):
    outside = _outside(tmp_path)
    os.rename(db / "log" / "other", outside / "other")
    (db / "log" / "other").symlink_to(outside / "other")
    before_out = snapshot(outside)
    assert main(["delete", "--task", "other", "--purge", "--yes", "--data-root", str(db)]) != 0
    assert "is a symbolic link" in capsys.readouterr().err
    assert snapshot(outside) == before_out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("purge", [False, True])
def test_a_linked_trash_is_refused_not_followed(purge, db, tmp_path, capsys):
    outside = _outside(tmp_path)
    (db / ".trash").symlink_to(outside)
    before_out, before = snapshot(outside), snapshot(db)
    argv = ["delete", "--task", "demo", "--yes", "--data-root", str(db)] + (["--purge"] if purge else [])
    status = main(argv)
    err = capsys.readouterr().err
    assert snapshot(outside) == before_out
    if purge:  # a purge does not use the trash
        assert status == 0
    else:
        assert status != 0 and "is a symbolic link" in err, err
        assert snapshot(db) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("copy", [False, True])
def test_a_linked_arc_folder_is_refused_not_followed(copy, db, tmp_path, capsys):
    outside = _outside(tmp_path)
    (db / "arc").symlink_to(outside)
    before_out, before = snapshot(outside), snapshot(db)
    assert main(["archive", "--task", "demo", "--yes", "--data-root", str(db)] + (["--copy"] if copy else [])) != 0
    assert "is a symbolic link" in capsys.readouterr().err
    assert snapshot(outside) == before_out and snapshot(db) == before


@pytest.mark.timeout(60)
def test_a_linked_journal_folder_is_refused(db, tmp_path, capsys):
    outside = _outside(tmp_path)
    (db / ".rla-journal").symlink_to(outside)
    before = snapshot(db)
    assert main(["archive", "--task", "demo", "--yes", "--data-root", str(db)]) != 0
    assert "is a symbolic link" in capsys.readouterr().err
    assert snapshot(outside) == {"keep.txt": 9} and snapshot(db) == before


@pytest.mark.timeout(60)
def test_listing_a_linked_task_folder_is_refused(db, tmp_path, capsys):
    """Even reading: `--task other` does not walk into a task folder linked outside."""
    outside = _outside(tmp_path)
    os.rename(db / "log" / "other", outside / "other")
    (db / "log" / "other").symlink_to(outside / "other")
    assert main(["list", "--task", "other", "--data-root", str(db)]) != 0
    assert "is a symbolic link" in capsys.readouterr().err
