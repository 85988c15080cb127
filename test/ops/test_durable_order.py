"""Power-loss durability of run operations, proven by the order of fsync and rename calls.

The kill trials run on a tmpfs (a SIGKILL stops the process, not the machine: what the kernel
did survives it, fsynced or not). What a power cut keeps depends on fsync instead, so it is
checked here: every operation records its ``fsync`` / ``rename`` / ``replace`` / ``unlink``
calls, and

* the journal is written durably (temp fsynced, renamed, folder fsynced) before the first move;
* every move of a data type is a rename whose folders are fsynced before the journal goes;
* a copy's files are fsynced before the copy is renamed into place, and the copy before a
  move across filesystems removes its source (else a power cut could lose both);
* a migrated run's rewritten ``run.json`` is fsynced (file and folder) before the journal goes.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from RLA.layout import JOURNAL_DIR, RUN_INFO_FILE
from RLA.ops import plan_archive, plan_delete, plan_migrate, steps, testing

Event = Tuple[str, ...]


class Recorder:
    """``os.fsync``/``rename``/``replace``/``unlink``/``rmdir`` calls in order, by real path."""

    def __init__(self, monkeypatch: Any) -> None:
        self.events: List[Event] = []
        real = {name: getattr(os, name) for name in ("fsync", "rename", "replace", "unlink")}

        def fsync(fd: int) -> None:
            real["fsync"](fd)
            self.events.append(("fsync", os.path.realpath(f"/proc/self/fd/{fd}")))

        def two(name: str) -> Any:
            def call(src: Any, dst: Any, **kwargs: Any) -> None:
                real[name](src, dst, **kwargs)
                self.events.append(("rename", _real(src), _real(dst)))
            return call

        def unlink(path: Any, **kwargs: Any) -> None:
            where = _real(path, kwargs.get("dir_fd"))  # shutil.rmtree unlinks by dir_fd
            real["unlink"](path, **kwargs)
            self.events.append(("unlink", where))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "rename", two("rename"))
        monkeypatch.setattr(os, "replace", two("replace"))
        monkeypatch.setattr(os, "unlink", unlink)

    def index(self, event: Event) -> int:
        assert event in self.events, f"{event} never happened: {self.events}"
        return self.events.index(event)

    def fsynced_between(self, path: str, start: int, end: int) -> bool:
        return ("fsync", path) in self.events[start:end]

    def journal_removed(self, root: Path) -> int:
        folder = os.path.realpath(root / JOURNAL_DIR)
        hits = [i for i, e in enumerate(self.events) if e[0] == "unlink" and os.path.dirname(e[1]) == folder
                and e[1].endswith(".json")]
        assert len(hits) == 1, self.events
        return hits[0]


def _real(path: Any, dir_fd: Any = None) -> str:
    """The real path of ``path`` (relative to ``dir_fd`` if given) with its last component
    kept (it may be gone or a link)."""
    path = os.fspath(path)
    if dir_fd is not None:
        path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    testing.make_database(root, runs=2, files=2, size=64)
    return root


def _plan(op: str, root: Path) -> Any:
    runs = testing._runs(root)
    return {"archive": lambda: plan_archive(root, runs),
            "archive --copy": lambda: plan_archive(root, runs, copy=True),
            "delete": lambda: plan_delete(root, runs),
            "delete --purge": lambda: plan_delete(root, runs, purge=True),
            "migrate": lambda: plan_migrate(root, runs, to_task=testing.TARGET_TASK),
            "migrate --move": lambda: plan_migrate(root, runs, to_task=testing.TARGET_TASK, move=True)}[op]()


def _journal_written(rec: Recorder, root: Path) -> int:
    """The journal's rename; asserts its temp was fsynced before and its folder after."""
    folder = os.path.realpath(root / JOURNAL_DIR)
    at = [i for i, e in enumerate(rec.events) if e[0] == "rename" and os.path.dirname(e[2]) == folder]
    assert len(at) == 1, rec.events
    temp = rec.events[at[0]][1]
    assert rec.fsynced_between(temp, 0, at[0]), f"journal temp not fsynced before its rename: {rec.events}"
    assert rec.fsynced_between(folder, at[0], len(rec.events)), "journal folder not fsynced after the rename"
    return at[0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", list(testing.OPS))
def test_the_journal_is_durable_before_the_first_move_and_every_move_before_it_goes(op, db, monkeypatch):
    plan = _plan(op, db)
    rec = Recorder(monkeypatch)
    plan.apply()
    written = _journal_written(rec, db)
    folder_synced = rec.index(("fsync", os.path.realpath(db / JOURNAL_DIR)))
    removed = rec.journal_removed(db)
    moves = [(i, e) for i, e in enumerate(rec.events) if e[0] == "rename" and i != written
             and os.path.basename(e[2]) != RUN_INFO_FILE]  # run.json: the test below
    assert moves, rec.events
    for i, (_, src, dst) in moves:
        assert folder_synced < i < removed, f"move {src} -> {dst} outside the journal's life: {rec.events}"
        for folder in {os.path.dirname(src), os.path.dirname(dst)}:
            assert rec.fsynced_between(folder, i, removed), \
                f"{folder} not fsynced after the rename {src} -> {dst}, before the journal went"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", ["archive --copy", "migrate"])
def test_a_copy_is_fsynced_before_it_is_renamed_into_place(op, db, monkeypatch):
    plan = _plan(op, db)
    rec = Recorder(monkeypatch)
    plan.apply()
    staged = [(i, e) for i, e in enumerate(rec.events) if e[0] == "rename" and ".part." in os.path.basename(e[1])]
    assert staged, rec.events
    for i, (_, part, dst) in staged:
        tree = [Path(dst)] + list(Path(dst).rglob("*")) if Path(dst).is_dir() else [Path(dst)]
        for item in tree:  # files (their bytes) and folders (their entries)
            inner = os.path.normpath(os.path.join(part, os.path.relpath(os.path.realpath(item), dst)))
            assert rec.fsynced_between(inner, 0, i), f"{inner} not fsynced before {part} became {dst}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", ["migrate", "migrate --move"])
def test_a_rewritten_run_json_is_durable_before_the_journal_goes(op, db, monkeypatch):
    plan = _plan(op, db)
    rec = Recorder(monkeypatch)
    plan.apply()
    removed = rec.journal_removed(db)
    for run in testing._runs(db) if op == "migrate" else []:
        assert run.run_info_file.is_file()
    for target in (run_plan.target for run_plan in plan.runs):
        info = os.path.realpath(target.log_dir / RUN_INFO_FILE)
        replaced = [i for i, e in enumerate(rec.events) if e[0] == "rename" and e[2] == info]
        assert replaced and replaced[-1] < removed, rec.events
        assert rec.fsynced_between(rec.events[replaced[-1]][1], 0, replaced[-1]), \
            f"the temp of {info} not fsynced before its rename: {rec.events}"
        assert rec.fsynced_between(os.path.dirname(info), replaced[-1], removed), \
            f"the folder of {info} not fsynced before the journal went"


@pytest.mark.timeout(60)
def test_a_move_across_filesystems_fsyncs_the_copy_before_removing_the_source(db, monkeypatch):
    monkeypatch.setattr(steps, "_rename", testing.cross_device(steps._rename))
    plan = _plan("archive", db)
    rec = Recorder(monkeypatch)
    plan.apply()
    for step in (step for run_plan in plan.runs for step in run_plan.steps):
        part = _real(steps.staged(step.dst, plan.op_id, steps.PART))
        gone = _real(steps.staged(step.src, plan.op_id, steps.GONE))
        placed = rec.index(("rename", part, _real(step.dst)))
        removals = [i for i, e in enumerate(rec.events) if e[0] == "unlink" and e[1].startswith(gone)]
        assert removals and placed < min(removals), f"{gone} removed before its copy was placed"
        for file in (p for p in step.dst.rglob("*") if p.is_file()) if step.dst.is_dir() else [step.dst]:
            inner = os.path.join(part, os.path.relpath(file, step.dst)) if step.dst.is_dir() else part
            assert rec.fsynced_between(inner, 0, placed), f"{inner} not fsynced before its source was removed"
