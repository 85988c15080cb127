"""Run services: told about the run's start, heartbeats and end in order; their failures surface."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import RLA.logger
from RLA.manager import run_info as ri
from RLA.manager.experiment import ExperimentManager
from RLA.manager.services import Lifecycle, RunService

MANAGER_DIR = Path(__file__).resolve().parents[2] / "RLA" / "manager"


class Recorder(RunService):
    """Notes each event with what run.json said on disk at that moment."""

    def __init__(self, name: str, events: List[Tuple[str, str, Any]]) -> None:
        self.name, self.events = name, events

    def _note(self, event: str, run) -> None:
        self.events.append((self.name, event, ri.read_run_info(run.layout.run_info_file)["status"]))

    def on_start(self, run) -> None:
        assert run.layout.log_dir.is_dir() and run.layout.code_dir.is_dir()
        self._note("start", run)

    def on_heartbeat(self, run) -> None:
        self._note("beat", run)

    def on_finish(self, run) -> None:
        self._note("finish", run)

    def after_finish(self, run) -> None:
        self._note("after", run)


class Failing(RunService):
    name = "flaky"

    def __init__(self, at: str) -> None:
        self.at = at

    def on_start(self, run) -> None:
        if self.at == "start":
            raise ValueError("cannot start")

    def on_finish(self, run) -> None:
        if self.at == "finish":
            raise RuntimeError("cannot finish")

    def after_finish(self, run) -> None:
        if self.at == "after":
            raise RuntimeError("cannot after")


def configured(tmp_path: Path, **config: Any) -> ExperimentManager:
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=1)
    mgr.configure(
        "svc",
        rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none", **config},
        data_root=str(tmp_path / "data"),
        run_file=[],
    )
    return mgr


@pytest.mark.timeout(60)
def test_services_are_told_start_heartbeat_and_finish_in_order(tmp_path: Path) -> None:
    events: List[Tuple[str, str, Any]] = []
    mgr = configured(tmp_path, HEARTBEAT_INTERVAL=0.02)
    mgr.lifecycle.attach(Recorder("a", events))
    mgr.lifecycle.attach(Recorder("b", events))
    mgr.log_files_gen()
    deadline = time.monotonic() + 30
    while sum(e[1] == "beat" for e in events) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    mgr.finish()
    mgr.finish()  # idempotent: nobody is told twice
    kinds = [(name, event) for name, event, _ in events]
    assert kinds[:2] == [("a", "start"), ("b", "start")]
    assert kinds[-4:] == [("a", "finish"), ("b", "finish"), ("a", "after"), ("b", "after")]
    beats = kinds[2:-4]
    assert len(beats) >= 2 and set(beats) == {("a", "beat"), ("b", "beat")}
    assert [status for _, event, status in events if event != "after"] == ["running"] * (len(events) - 2)
    assert [status for _, event, status in events if event == "after"] == ["finished", "finished"]


def test_the_lifecycle_tells_each_service_in_the_order_attached() -> None:
    events: List[str] = []

    class Named(RunService):
        def __init__(self, name: str) -> None:
            self.name = name

        def on_start(self, run) -> None:
            events.append(f"{self.name}.start")

        def on_finish(self, run) -> None:
            events.append(f"{self.name}.finish")

    lifecycle = Lifecycle([Named("backup")])
    lifecycle.attach(Named("hook"), once=True)
    lifecycle.use([Named("backup2"), Named("sync")])  # a new configuration keeps the one-run hook
    run: Any = type("FakeRun", (), {"index": "t/2026/11/25/00-00-00-000000"})()
    lifecycle.start(run)
    assert lifecycle.finish(run) == []
    lifecycle.after_finish(run)
    lifecycle.start(run)  # the one-run hook is gone
    assert events == [
        "backup2.start",
        "sync.start",
        "hook.start",
        "backup2.finish",
        "sync.finish",
        "hook.finish",
        "backup2.start",
        "sync.start",
    ]


def test_a_service_failing_at_start_fails_the_run_and_names_itself(tmp_path: Path) -> None:
    mgr = configured(tmp_path)
    mgr.lifecycle.attach(Failing("start"))
    with pytest.raises(ValueError, match="cannot start") as raised:
        mgr.log_files_gen()
    layout = mgr.layout
    assert layout is not None
    assert any("'flaky'" in note and layout.index in note for note in raised.value.__notes__)
    info = ri.read_run_info(layout.run_info_file)
    assert info["status"] == "crashed" and info["error"] == "ValueError: cannot start"


def test_a_service_failing_at_finish_is_reported_and_the_run_still_ends(tmp_path: Path) -> None:
    events: List[Tuple[str, str, Any]] = []
    mgr = configured(tmp_path)
    mgr.lifecycle.attach(Failing("finish"))
    mgr.lifecycle.attach(Recorder("after-the-failing-one", events))
    layout = mgr.log_files_gen()
    mgr.finish()
    info = ri.read_run_info(layout.run_info_file)
    assert info["status"] == "finished" and info["finish_warnings"] == ["RuntimeError: cannot finish"]
    assert "while finishing the run: RuntimeError: cannot finish" in (layout.log_dir / "warn.txt").read_text()
    assert [event for _, event, _ in events] == ["start", "finish", "after"]  # the others were still told


def test_a_service_failing_after_the_end_is_printed(tmp_path: Path, capsys) -> None:
    mgr = configured(tmp_path)
    mgr.lifecycle.attach(Failing("after"))
    layout = mgr.log_files_gen()
    mgr.finish()
    assert f"RLA: after finishing {layout.index}: RuntimeError: cannot after" in capsys.readouterr().err
    assert ri.read_run_info(layout.run_info_file)["status"] == "finished"


def test_finish_hooks_are_called_once_for_the_run_they_were_added_to(tmp_path: Path) -> None:
    calls: List[str] = []
    mgr = configured(tmp_path)
    mgr.log_files_gen()
    mgr.add_finish_hook(lambda: calls.append("finish"))
    mgr.add_post_finish_hook(lambda: calls.append("after"))
    mgr.finish()
    mgr.log_files_gen()
    mgr.finish()
    assert calls == ["finish", "after"]


class CountingLogger:
    """The core logger, with the names the manager called through it counted."""

    def __init__(self) -> None:
        self.called: List[str] = []

    def __getattr__(self, name: str) -> Any:
        self.called.append(name)
        return getattr(RLA.logger, name)


def test_the_manager_writes_through_the_logger_it_was_given(tmp_path: Path) -> None:
    log = CountingLogger()
    mgr = ExperimentManager(logger=log)
    mgr.set_hyper_param(seed=1)
    mgr.configure(
        "svc",
        rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"},
        data_root=str(tmp_path / "data"),
        run_file=[],
    )
    layout = mgr.log_files_gen()
    mgr.print_args()
    mgr.finish()
    assert {"configure", "info", "backup", "reset"} <= set(log.called)
    assert "key: seed, value: 1" in (layout.log_dir / "backup.txt").read_text()


def test_the_manager_package_never_imports_a_face_of_the_original() -> None:
    for path in sorted(MANAGER_DIR.glob("*.py")):
        assert "easy_log" not in path.read_text(encoding="utf-8"), path.name
