"""Interrupted syncs: unreachable server, connections dropped server-side, SIGKILL mid-file."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from RLA.errors import SyncError, TransportError
from RLA.sync.syncer import RunSyncer
from sync_helpers import free_port, ftp_settings, settings, sftp_settings, tree

pytestmark = pytest.mark.timeout(120)
BIG = 48 * 1024 * 1024


def _big_run(make_run, size: int = BIG):
    return make_run(extra={"results/big.bin": os.urandom(size)})


def _wait_for_part(path: Path, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > 0:
            return
        time.sleep(0.002)
    raise AssertionError(f"{path} never appeared")


def _part_of(remote_root: Path, run, rel: str) -> Path:
    target = run.moved(data_root=remote_root).results_dir / rel
    return target.with_name(f".{target.name}.rla-part")


def _descendants(pid: int) -> list:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, timeout=10).stdout
    children = {}
    for line in out.splitlines():
        p, pp = map(int, line.split())
        children.setdefault(pp, []).append(p)
    found, stack = [], list(children.get(pid, []))
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(children.get(p, []))
    return found


def test_unreachable_server_is_a_clear_sync_error(make_run, tmp_path) -> None:
    """Nothing listening: retries with exponential backoff, then one SyncError naming the server."""
    port = free_port()
    waits = []
    syncer = RunSyncer(settings(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=port,
                                remote_data_root="/srv/db", retries=2, backoff=0.5),
                       tmp_path / "data", sleep=waits.append)
    with pytest.raises(SyncError) as info:
        syncer.push([make_run()])
    assert f"127.0.0.1:{port}" in str(info.value) and "after 3 attempt" in str(info.value)
    assert isinstance(info.value.__cause__, TransportError)
    assert waits == [0.5, 1.0]


def test_sftp_connection_dropped_server_side_is_resumed(sshd, make_run, tmp_path) -> None:
    """Killing sshd's session process mid-file: the syncer reconnects, resumes and finishes."""
    run = _big_run(make_run)
    remote = tmp_path / "remote_db"
    syncer = RunSyncer(sftp_settings(sshd, remote, retries=3, backoff=0.05), tmp_path / "data")
    result = {}

    def push() -> None:
        try:
            result["report"] = syncer.push([run])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            result["error"] = exc
    worker = threading.Thread(target=push)
    worker.start()
    _wait_for_part(_part_of(remote, run, "big.bin"))
    killed = _descendants(sshd.process.pid)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    worker.join(timeout=90)
    report = result.get("report")
    assert report is not None, f"push failed: {result.get('error')!r} (killed {killed})"
    assert report.retries >= 1, f"no retry: the upload ended before the kill? killed {killed}"
    assert tree(remote) == tree(tmp_path / "data")
    assert report.bytes_sent < 2 * BIG  # resumed, not restarted


def test_ftp_connection_dropped_server_side_is_resumed(ftpd, ftp_drop, make_run, tmp_path) -> None:
    """The FTP server closes the session after 1 MiB of a file: the next attempt completes it."""
    run = _big_run(make_run, 8 * 1024 * 1024)
    ftp_drop.threshold = 1024 * 1024
    report = RunSyncer(ftp_settings(ftpd, retries=2, backoff=0.05), tmp_path / "data").push([run])
    assert ftp_drop.dropped and report.retries >= 1
    assert tree(ftpd.home / "db") == tree(tmp_path / "data")


_CHILD = """
import json, sys
from RLA.config.fields import validate_section
from RLA.config.remote import RemoteSettings
from RLA.layout import RunLayout
from RLA.sync.syncer import RunSyncer
spec = json.loads(sys.argv[1])
settings = validate_section(RemoteSettings, spec["settings"], "<child>")
run = RunLayout(__import__("pathlib").Path(spec["root"]), *spec["run"])
RunSyncer(settings, spec["root"]).push([run])
"""


def test_sigkill_mid_file_is_finished_by_the_next_sync(sshd, make_run, tmp_path, subprocess_env) -> None:
    """A syncing process killed with SIGKILL mid-file leaves no torn file; the next sync resumes it."""
    run = _big_run(make_run)
    remote = tmp_path / "remote_db"
    raw = dict(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=sshd.port, username="root",
               key_filename=str(sshd.client_key), known_hosts=str(sshd.known_hosts), allow_agent=False,
               remote_data_root=str(remote), retries=0, timeout=10.0)
    spec = {"settings": raw, "root": str(tmp_path / "data"), "run": [run.task, run.date, run.name]}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(spec)], env=subprocess_env)
    part = _part_of(remote, run, "big.bin")
    try:
        _wait_for_part(part)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    final = run.moved(data_root=remote).results_dir / "big.bin"
    assert not final.exists()  # never a torn file under the real name
    partial = -1
    while partial != part.stat().st_size:  # sshd may still write requests sent before the kill
        partial = part.stat().st_size
        time.sleep(0.3)
    assert 0 < partial < BIG
    report = RunSyncer(settings(**raw), tmp_path / "data").push([run])
    assert tree(remote) == tree(tmp_path / "data")
    assert report.bytes_sent <= BIG - partial + 200_000  # the rest of big.bin plus the small files


def test_sigkill_mid_append_is_repaired_by_the_next_sync(sshd, make_run, tmp_path, subprocess_env) -> None:
    """Killed while appending to a log in place: the next sync notices the odd size and re-sends it whole."""
    run = make_run()
    remote = tmp_path / "remote_db"
    raw = dict(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=sshd.port, username="root",
               key_filename=str(sshd.client_key), known_hosts=str(sshd.known_hosts), allow_agent=False,
               remote_data_root=str(remote), retries=0, timeout=10.0)
    RunSyncer(settings(**raw), tmp_path / "data").push([run])
    log = run.log_dir / "log.txt"
    before = log.stat().st_size
    with open(log, "ab") as handle:
        handle.write(b"x" * (BIG - 1) + b"\n")
    spec = {"settings": raw, "root": str(tmp_path / "data"), "run": [run.task, run.date, run.name]}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(spec)], env=subprocess_env)
    pushed_log = run.moved(data_root=remote).log_dir / "log.txt"
    try:
        deadline = time.monotonic() + 30
        while pushed_log.stat().st_size <= before and time.monotonic() < deadline:
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    # sshd may still write requests that arrived before the kill: wait until the file settles.
    size = -1
    while size != pushed_log.stat().st_size:
        size = pushed_log.stat().st_size
        time.sleep(0.3)
    assert before < size < log.stat().st_size  # killed mid-append
    assert pushed_log.read_bytes() == log.read_bytes()[:size]  # still a prefix
    report = RunSyncer(settings(**raw), tmp_path / "data").push([run])
    assert report.files_sent == 1 and report.files_appended == 0
    assert tree(remote) == tree(tmp_path / "data")
