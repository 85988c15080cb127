"""A crafted journal under .rla-journal/ makes the repair touch nothing outside its runs.

The repair (the next operation, ``rla fsck --repair``) moves, copies and deletes what a
pending journal names. Each journal here is crafted the way someone able to drop a file in
``.rla-journal/`` (or a pull of a hostile data root) could: a target root elsewhere, ``log``
as a purge source, a destination in ``.rla-journal/`` or through a link, a journal that is a
link, a FIFO or 100k levels deep. Each must be refused and reported, the journal kept, every
run whole and the folder outside the data root untouched.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest

from RLA.layout import JOURNAL_DIR, TRASH
from RLA.ops import recover, testing
from RLA.ops.fsck import scan
from RLA.ops.journal import JournalError, load_journal
from rla_scripts.cli import main

OP = "20261125-120000-1-abcdef"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    testing.make_database(root, runs=2, files=1, size=16)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    return root


def _victim(db: Path) -> List[str]:
    return sorted(p.relative_to(db.parent / "victim").as_posix() for p in (db.parent / "victim").rglob("*"))


def _plant(db: Path, runs: List[Dict[str, Any]], action: str = "move", target_root: Any = None,
           name: str = OP) -> Path:
    folder = db / JOURNAL_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"format_version": 1, "op_id": name, "action": action, "verb": action,
                                "target_root": target_root, "runs": runs}))
    return path


def _run_entry(run, steps, target=None) -> Dict[str, Any]:
    return {"index": run.index, "rewrite": False, "target": target,
            "steps": [{"type": t, "src": src, "dst": dst} for t, src, dst in steps]}


def _archive_target(run) -> Dict[str, Any]:
    return {"task": run.task, "date": run.date, "name": run.name, "archived": True}


def _assert_refused_and_whole(db: Path, before) -> None:
    """The journal is reported (not run), kept, and every run and the victim are intact."""
    lines = recover(db).lines()
    assert lines and "Cannot read the operation journal" in lines[0], lines
    assert [f.kind for f in scan(db).findings] == ["journal"]
    for run, manifest in before.items():
        assert testing.manifest_of(run) == manifest
    assert _victim(db) == ["keep.txt"] and (db.parent / "victim" / "keep.txt").read_text() == "keep"
    assert list((db / JOURNAL_DIR).glob("*.json"))


def _before(db: Path):
    return {run: testing.manifest_of(run) for run in testing._runs(db)}


@pytest.mark.timeout(60)
def test_a_journal_naming_a_target_root_elsewhere_is_refused(db):
    before = _before(db)
    run = next(iter(before))
    victim = db.parent / "victim"
    _plant(db, [_run_entry(run, [("log", f"log/{run.relative}", f"arc/log/{run.relative}")],
                           {"task": run.task, "date": run.date, "name": run.name, "archived": True})],
           target_root=str(victim))
    _assert_refused_and_whole(db, before)
    assert "did not confirm" in str(pytest.raises(JournalError, load_journal, db, next((db / JOURNAL_DIR).glob("*.json"))).value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", ["purge log", "purge arc", "purge a day folder", "purge a file in a run",
                                  "purge the trash", "trash to elsewhere", "move into the journal folder",
                                  "move to another run", "two runs in one", "unknown data type",
                                  "a type that is not the path's"])
def test_a_journal_naming_a_path_that_is_not_a_run_is_refused(case, db):
    before = _before(db)
    first, second = list(before)[:2]
    rel = first.relative
    entries = {
        "purge log": ("purge", [_run_entry(first, [("log", "log", None)])]),
        "purge arc": ("purge", [_run_entry(first, [("log", "arc", None)])]),
        "purge a day folder": ("purge", [_run_entry(first, [("log", f"log/{first.task}/{first.date}", None)])]),
        "purge a file in a run": ("purge", [_run_entry(first, [("log", f"log/{rel}/run.json", None)])]),
        "purge the trash": ("purge", [_run_entry(first, [("log", TRASH, None)])]),
        "trash to elsewhere": ("trash", [_run_entry(first, [("log", f"log/{rel}", f"code/{rel}")])]),
        "move into the journal folder": ("move", [_run_entry(first, [("log", f"log/{rel}", f"{JOURNAL_DIR}/x")],
                                                             _archive_target(first))]),
        "move to another run": ("move", [_run_entry(first, [("log", f"log/{rel}", f"arc/log/{second.relative}")],
                                                    _archive_target(first))]),
        "two runs in one": ("purge", [_run_entry(first, [("log", f"log/{rel}", None),
                                                         ("code", f"code/{second.relative}", None)])]),
        "unknown data type": ("purge", [_run_entry(first, [("etc", f"log/{rel}", None)])]),
        "a type that is not the path's": ("purge", [_run_entry(first, [("code", f"log/{rel}", None)])]),
    }
    action, runs = entries[case]
    _plant(db, runs, action=action)
    _assert_refused_and_whole(db, before)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("linked", ["trash", "task"])
def test_a_journal_whose_paths_pass_a_link_is_refused(linked, db):
    """A journal of the right shape, but a link placed on its way after it was written."""
    before = _before(db)
    run = next(iter(before))
    victim = db.parent / "victim"
    if linked == "trash":
        os.symlink(victim, db / TRASH)
        _plant(db, [_run_entry(run, [("log", f"log/{run.relative}", f"{TRASH}/{OP}/log/{run.relative}")])],
               action="trash")
    else:
        (db / "arc" / "log").mkdir(parents=True, exist_ok=True)
        os.symlink(victim, db / "arc" / "log" / run.task)
        _plant(db, [_run_entry(run, [("log", f"log/{run.relative}", f"arc/log/{run.relative}")],
                               _archive_target(run))])
    _assert_refused_and_whole(db, before)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["../../victim/x", "20261125-120000-1-ABCDEF/..", "x"])
def test_a_journal_with_a_crafted_operation_id_is_refused(name, db):
    """The id becomes part of hidden file names (``.rla-<op-id>.part.*``) and trash folders."""
    before = _before(db)
    run = next(iter(before))
    path = _plant(db, [_run_entry(run, [("log", f"log/{run.relative}", None)])], action="purge")
    raw = json.loads(path.read_text())
    raw["op_id"] = name
    path.write_text(json.dumps(raw))
    _assert_refused_and_whole(db, before)


@pytest.mark.timeout(60)
def test_a_journal_that_is_a_link_is_not_followed(db):
    before = _before(db)
    run = next(iter(before))
    elsewhere = db.parent / "victim" / "j.json"
    (db / JOURNAL_DIR).mkdir()
    elsewhere.write_text(json.dumps({"format_version": 1, "op_id": OP, "action": "purge", "verb": "purge",
                                     "target_root": None,
                                     "runs": [_run_entry(run, [("log", f"log/{run.relative}", None)])]}))
    os.symlink(elsewhere, db / JOURNAL_DIR / f"{OP}.json")
    lines = recover(db).lines()
    assert "a symbolic link" in lines[0], lines
    assert all(testing.manifest_of(r) == m for r, m in before.items())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "deep", "deep object"])
def test_a_fifo_or_deeply_nested_journal_is_reported_without_hanging(kind, db, capsys):
    (db / JOURNAL_DIR).mkdir()
    path = db / JOURNAL_DIR / f"{OP}.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text("[" * 100_000 + "]" * 100_000 if kind == "deep" else '{"a":' * 100_000 + "1" + "}" * 100_000)
    result: List[Any] = []
    worker = threading.Thread(target=lambda: result.append(main(["fsck", "--repair", "--data-root", str(db)])),
                              daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "rla fsck --repair hangs on the journal"
    assert result == [1]
    out = capsys.readouterr().out
    assert "unreadable" in out and ("not a regular file" in out or "nested" in out), out
    assert main(["archive", "--task", "demo", "--yes", "--data-root", str(db)]) == 0  # the journal blocks nothing


@pytest.mark.timeout(120)
def test_a_migration_to_another_data_root_killed_mid_way_is_still_repaired(db, tmp_path):
    """The target root's confirmation is written before the journal, so a real cross-root
    journal passes the check; it is removed with the journal."""
    other = tmp_path / "other"
    other.mkdir()
    before = _before(db)
    testing.cli_parser()
    status = testing.wait(testing.fork_cli(db, ["migrate", "--task", "demo", "--to-data-root", str(other),
                                                "--move", "--yes"], "step-done:8"))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 86
    assert list((other / JOURNAL_DIR).glob("*.target"))
    assert main(["fsck", "--repair", "--data-root", str(db)]) == 0
    for run, manifest in before.items():
        moved = run.moved(data_root=other)
        assert not run.existing_paths() and set(testing.manifest_of(moved)) == set(manifest)
    assert not list((other / JOURNAL_DIR).iterdir()) or \
        [p.name for p in (other / JOURNAL_DIR).iterdir()] == ["lock"]


@pytest.mark.timeout(60)
def test_two_journals_naming_the_same_run_leave_it_whole_in_one_place(db):
    """Two pending journals (an archive and a delete) of the same run: the first finishes, the
    second finds its source gone and moves nothing."""
    before = _before(db)
    run = next(iter(before))
    kinds = sorted(run.existing_paths())
    arc = [(t, f"{os.path.relpath(run.path(t), db)}", os.path.relpath(run.moved(archived=True).path(t), db))
           for t in kinds]
    _plant(db, [_run_entry(run, arc, _archive_target(run))], name="20261125-120000-1-aaaaaa")
    trash = [(t, src, f"{TRASH}/20261125-120000-2-bbbbbb/{src}") for t, src, _ in arc]
    _plant(db, [_run_entry(run, trash)], action="trash", name="20261125-120000-2-bbbbbb")
    lines = recover(db).lines()
    assert len([line for line in lines if line.startswith("finished")]) == 2, lines
    assert testing.manifest_of(run.moved(archived=True)) == before[run]
    assert not run.existing_paths()
    assert not (db / TRASH).exists() or not [p for p in (db / TRASH).rglob("*") if p.is_file()]
    assert scan(db).findings == []
