"""The run factory: it alone claims a run's directory (exclusively) and writes its first run.json."""

from __future__ import annotations

import datetime as _dt
import os
import threading
from pathlib import Path
from typing import List

import pytest

from RLA.manager import claim as claim_module
from RLA.manager import run_info as ri
from RLA.manager.run import RunFactory, RunRecord, RunSpec
from RLA.redaction import RedactionPolicy

INSTANT = _dt.datetime(2026, 11, 25, 13, 14, 15, 123456)


def spec(**params) -> RunSpec:
    params = params or {"seed": 1}
    return RunSpec(
        hyper_params=dict(params),
        bookkeeping={},
        tracked_keys=["seed"],
        tracked=[("seed", params.get("seed", 1))],
        heartbeat_interval=30.0,
    )


def factory(tmp_path: Path) -> RunFactory:
    return RunFactory((tmp_path / "data").resolve(), "demo", clock=lambda: INSTANT)


def test_a_created_run_has_its_directory_and_its_running_record(tmp_path: Path) -> None:
    run = factory(tmp_path).create(spec(seed=3), RedactionPolicy())
    info = ri.read_run_info(run.layout.run_info_file)
    assert run.layout.log_dir.is_dir() and run.started == INSTANT
    assert info["index"] == run.index == f"demo/2026/11/25/{INSTANT.strftime('%H-%M-%S-%f')}"
    assert info["status"] == ri.RUNNING and info["pid"] == os.getpid() and info["hyper_params"] == {"seed": 3}
    assert info["data_root"] == str((tmp_path / "data").resolve()) and run.record.info == info


def test_runs_created_at_the_same_instant_get_their_own_directory_and_record(tmp_path: Path) -> None:
    make = factory(tmp_path)
    runs = [make.create(spec(), RedactionPolicy()) for _ in range(3)]  # same instant, same name parts
    assert [r.started for r in runs] == [INSTANT + _dt.timedelta(microseconds=k) for k in range(3)]
    assert len({r.layout.log_dir for r in runs}) == 3
    for run in runs:
        assert ri.read_run_info(run.layout.run_info_file)["index"] == run.index


def test_a_directory_the_scan_did_not_see_is_never_shared(tmp_path: Path, monkeypatch) -> None:
    """The day's scan can miss a run (a name it cannot parse, a tool that does not take the lock):
    the exclusive mkdir still refuses its directory and the claim moves on."""
    make = factory(tmp_path)
    first = make.create(spec(), RedactionPolicy())
    monkeypatch.setattr(claim_module, "parse_run_name", lambda entry: None)  # the scan sees nothing
    second = make.create(spec(), RedactionPolicy())
    assert second.layout.log_dir != first.layout.log_dir
    assert second.started == INSTANT + _dt.timedelta(microseconds=1)
    assert ri.read_run_info(first.layout.run_info_file)["index"] == first.index  # not overwritten


def test_a_record_that_cannot_be_written_is_recorded_as_crashed(tmp_path: Path, monkeypatch) -> None:
    real = ri.write_run_info
    calls: List[str] = []

    def first_write_fails(path, info, policy=None):
        calls.append(info["status"])
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        real(path, info, policy)

    monkeypatch.setattr(ri, "write_run_info", first_write_fails)
    with pytest.raises(OSError, match="No space left"):
        factory(tmp_path).create(spec(), RedactionPolicy())
    (run_json,) = (tmp_path / "data").rglob("run.json")
    info = ri.read_run_info(run_json)
    assert calls == [ri.RUNNING, ri.CRASHED]
    assert info["status"] == ri.CRASHED and info["error"].startswith("OSError") and info["end_time"]


def test_reopen_marks_the_run_running_in_this_process_and_tells_the_index(tmp_path: Path) -> None:
    told = []
    make = RunFactory(
        (tmp_path / "data").resolve(),
        "demo",
        clock=lambda: INSTANT,
        on_reopened=lambda root, layouts: told.append((root, list(layouts))),
    )
    run = make.create(spec(), RedactionPolicy())
    run.record.update(status=ri.FINISHED, exit_code=0, pid=1, parent="demo/2026/11/24/00-00-00-000000")
    again = make.reopen(run.layout, spec(seed=1, lr=0.5), RedactionPolicy(), restarts=[1])
    info = ri.read_run_info(run.layout.run_info_file)
    assert info["status"] == ri.RUNNING and info["exit_code"] is None and info["pid"] == os.getpid()
    assert info["restarts"] == [1] and info["hyper_params"] == {"seed": 1, "lr": 0.5}
    assert info["parent"] == "demo/2026/11/24/00-00-00-000000" and again.started == INSTANT
    assert told == [(make.data_root, [run.layout])]


def test_secrets_of_the_tracked_values_never_reach_the_run_name(tmp_path: Path) -> None:
    policy = RedactionPolicy(values=["hunter2-secret"])
    run = factory(tmp_path).create(
        RunSpec({"seed": "hunter2-secret"}, {}, ["seed"], [("seed", "hunter2-secret")]), policy
    )
    assert "hunter2" not in run.layout.name
    assert "hunter2" not in run.layout.run_info_file.read_text()


def test_record_updates_are_written_one_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """While one update writes run.json, another (the heartbeat thread's) waits for it."""
    record = RunRecord(tmp_path / "run.json", RedactionPolicy(), {"status": "running"})
    real = ri.write_run_info
    inside, release = threading.Event(), threading.Event()

    def slow_write(path, info, policy=None):
        if threading.current_thread().name == "slow-writer":
            inside.set()
            release.wait(10)
        real(path, info, policy)

    monkeypatch.setattr(ri, "write_run_info", slow_write)
    first = threading.Thread(target=record.update, kwargs={"slow": True}, name="slow-writer")
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=record.update, kwargs={"heartbeat": "now"})
    second.start()
    second.join(0.3)
    blocked = second.is_alive()  # it must wait for the lock the first write holds
    release.set()
    first.join(10)
    second.join(10)
    assert blocked
    assert ri.read_run_info(tmp_path / "run.json") == {"status": "running", "slow": True, "heartbeat": "now"}
