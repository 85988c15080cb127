"""``exp_manager.sync_log_file``: skip rules, a real push, background mode, no password anywhere."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from RLA.errors import SyncError
from RLA.manager.experiment import ExperimentManager
from sync_helpers import free_port, tree

pytestmark = pytest.mark.timeout(90)
SECRET = "Pa55-never-stored-9f3c"


def _manager(tmp_path: Path, remote: dict, send: bool = True, master: bool = False) -> ExperimentManager:
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    config = project / "rla_config.yaml"
    config.write_text(yaml.safe_dump({"LOG_USED": ["log", "csv"], "DL_FRAMEWORK": "none",
                                      "SEND_LOG_FILE": send, "REMOTE_SETTING": remote}))
    mgr = ExperimentManager()
    mgr.set_hyper_param(env_id="Hopper-v4", seed=3)
    mgr.add_record_param(["env_id", "seed"])
    mgr.configure("sync_task", rla_config=str(config), data_root=str(tmp_path / "data"), run_file=[],
                  is_master_node=master)
    mgr.log_files_gen()
    return mgr


def _sftp(sshd, remote: Path, **extra) -> dict:
    raw = dict(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=sshd.port, username="root",
               key_filename=str(sshd.client_key), known_hosts=str(sshd.known_hosts), allow_agent=False,
               remote_log_root=str(remote), retries=0, timeout=10.0)  # the original's key name
    raw.update(extra)
    return raw


def _train(steps: int = 5) -> None:
    from RLA.easy_log import logger

    for step in range(steps):
        logger.record_tabular("reward", float(step))
        logger.dump_tabular()


@pytest.mark.parametrize("send, master", [(False, False), (True, True)])
def test_skipped_on_main_node_or_without_send_log_file(tmp_path, send, master) -> None:
    """is_master_node or SEND_LOG_FILE: false → nothing is sent (remote untouched)."""
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, {"file_transfer_protocol": "local", "remote_data_root": str(remote)}, send, master)
    try:
        assert mgr.sync_log_file() is None
        assert not remote.exists()
    finally:
        mgr.finish()


def test_pushes_the_current_run_with_its_local_layout(sshd, tmp_path) -> None:
    """remote_log_root works (the original raised) and the main node sees the local layout."""
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, _sftp(sshd, remote))
    try:
        _train()
        mgr.sync_log_file()
        local_run = mgr.layout
        _train(3)
        report = mgr.sync_log_file()
        assert report.files_appended >= 1
        pushed = local_run.moved(data_root=remote)
        assert (pushed.log_dir / "progress.csv").read_bytes() == (local_run.log_dir / "progress.csv").read_bytes()
        assert tree(remote, ("log", "code")) == tree(tmp_path / "data", ("log", "code"))
    finally:
        mgr.finish()


def test_skip_error_turns_failure_into_a_warning(tmp_path) -> None:
    """skip_error=True: an unreachable server is a warning in warn.txt, not an exception."""
    mgr = _manager(tmp_path, {"ftp_server": "127.0.0.1", "port": free_port(), "remote_data_root": "/srv/db",
                              "retries": 0})
    try:
        assert mgr.sync_log_file(skip_error=True) is None
        with pytest.raises(SyncError, match="127.0.0.1"):
            mgr.sync_log_file()
        warn_txt = (mgr.layout.log_dir / "warn.txt").read_text()
        assert "sync_log_file failed" in warn_txt
    finally:
        mgr.finish()


def test_background_sync_never_blocks_training_and_reports_on_finish(tmp_path) -> None:
    """Unreachable server in background mode: training continues; finish() reports the failure."""
    mgr = _manager(tmp_path, {"ftp_server": "127.0.0.1", "port": free_port(), "remote_data_root": "/srv/db",
                              "background": True, "retries": 2, "backoff": 0.3})
    layout = mgr.layout
    for _ in range(3):  # each call returns at once (its time is bench/bench_sync_background.py's goal)
        _train(2)
        mgr.sync_log_file()
    mgr.finish()
    info = json.loads((layout.log_dir / "run.json").read_text())
    assert info["status"] == "finished"
    assert any("background sync" in w for w in info.get("finish_warnings", []))
    assert "background sync failed" in (layout.log_dir / "warn.txt").read_text()


def test_background_sync_flushes_on_finish(sshd, tmp_path) -> None:
    """Background mode: finish() sends what was logged after the last sync_log_file()."""
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, _sftp(sshd, remote, background=True))
    layout = mgr.layout
    _train(2)
    mgr.sync_log_file()
    _train(4)
    mgr.finish()
    pushed = layout.moved(data_root=remote)
    assert (pushed.log_dir / "progress.csv").read_bytes() == (layout.log_dir / "progress.csv").read_bytes()


def test_no_password_anywhere_in_either_database(sshd, tmp_path, monkeypatch) -> None:
    """RLA_REMOTE_PASSWORD and a config password never reach run.json, logs, warnings or the remote."""
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", SECRET)
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, _sftp(sshd, remote, password=SECRET + "-cfg",
                                   sync_types=["log", "code", "results", "archive_tester", "checkpoint"]))
    try:
        _train()
        mgr.sync_log_file()  # key auth succeeds; the password is offered but never stored
        mgr.warn("end of test")
        _train(1)
        mgr.sync_log_file()
    finally:
        mgr.finish()
    bad = _manager(tmp_path / "other", {"ftp_server": "127.0.0.1", "port": free_port(),
                                        "remote_data_root": "/srv/db", "retries": 0, "password": SECRET})
    try:
        bad.sync_log_file(skip_error=True)
    finally:
        bad.finish()
    scanned = 0
    for root in (tmp_path / "data", tmp_path / "other" / "data", remote):
        for path in root.rglob("*"):
            if path.is_file():
                scanned += 1
                assert SECRET.encode() not in path.read_bytes(), path
    assert scanned > 5
    warn_txt = (tmp_path / "other" / "data").rglob("warn.txt")
    assert any("sync_log_file failed" in p.read_text() for p in warn_txt)


def test_main_node_lists_pushed_runs_like_local_ones(sshd, tmp_path) -> None:
    """The query tool on the main node's root finds the pushed run with its parameters and metrics."""
    from RLA.query import list_runs

    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, _sftp(sshd, remote))
    try:
        _train(4)
        mgr.sync_log_file()
        index = mgr.layout.index
    finally:
        mgr.finish()
    frame = list_runs(remote)
    row = frame[frame["index"] == index]
    assert len(row) == 1
    assert row["seed"].iloc[0] == 3 and row["last(reward)"].iloc[0] == 3.0


def test_sync_after_finish_sends_the_final_status(sshd, tmp_path) -> None:
    """One more sync_log_file() after finish() pushes run.json with status finished (no thread left)."""
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, _sftp(sshd, remote, background=True))
    _train(2)
    mgr.sync_log_file()
    mgr.finish()
    report = mgr.sync_log_file()
    assert report is not None and report.runs == 1
    pushed = json.loads((mgr.layout.moved(data_root=remote).log_dir / "run.json").read_text())
    assert pushed["status"] == "finished"


@pytest.mark.parametrize("background", [False, True])
def test_finish_pushes_the_final_status_by_itself(tmp_path, background) -> None:
    """A run that was synced once is pushed again after finish(): the main node sees 'finished'."""
    remote = tmp_path / "remote_db"
    mgr = _manager(tmp_path, {"file_transfer_protocol": "local", "remote_data_root": str(remote),
                              "background": background})
    _train(3)
    mgr.sync_log_file()
    mgr.finish()
    pushed = mgr.layout.moved(data_root=remote)
    assert json.loads((pushed.log_dir / "run.json").read_text())["status"] == "finished"
    assert (pushed.log_dir / "progress.csv").read_bytes() == (mgr.layout.log_dir / "progress.csv").read_bytes()
