"""Pull never blocks on, nor aborts for, a file that is not what the listing said.

A FIFO, socket or device in the main node's run folder is skipped (opening a FIFO for
reading blocks until someone writes: the pull hung forever over the local transport, and
OpenSSH's sftp-server blocked on it until the channel timed out, failing the whole pull). A
file that turns into a FIFO or a folder between the listing and the read is skipped too, as
is a file whose local destination is taken by a folder. Each case: the rest of the run still
arrives, and the file comes once the obstacle is gone.
"""
from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path
from typing import Callable, List, Optional

import pytest

from RLA.sync.local import LocalTransport
from RLA.sync.syncer import RunSyncer, SyncReport
from hostile_servers import Fake, HostileSFTPServer
from sync_helpers import RUN_NAMES, TASK, settings, sftp_settings, tree

pytestmark = pytest.mark.timeout(120)
DAY = f"{TASK}/2026/03/04"


def _finishes(pull: Callable[[], SyncReport], fifos: List[Path], seconds: float = 60.0) -> SyncReport:
    """``pull()`` in a thread; fail if it blocks (then open the FIFOs for writing to release it)."""
    box: dict = {}

    def target() -> None:
        try:
            box["report"] = pull()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:  # a blocked open() for reading returns once a writer appears
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        thread.join(10)
        pytest.fail(f"pull blocked for {seconds} s on a FIFO")
    if "error" in box:
        raise box["error"]
    return box["report"]


def _unix_socket(path: Path) -> None:
    """A socket inode (as a bound AF_UNIX socket leaves; bind() refuses paths this long)."""
    os.mknod(path, stat.S_IFSOCK | 0o600)


def test_fifos_and_sockets_on_the_main_node_are_skipped_not_opened(make_run, tmp_path: Path) -> None:
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    fifos = [run.log_dir / "pipe.csv", server / "archive_tester" / DAY / f"{RUN_NAMES[1]}.json"]
    fifos[1].parent.mkdir(parents=True, exist_ok=True)
    for fifo in fifos:
        os.mkfifo(fifo)
    _unix_socket(run.path("code") / "agent.sock")
    warnings: List[str] = []
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(server)),
                       tmp_path / "pulled", warn=warnings.append)
    report = _finishes(syncer.pull, fifos)
    assert report.files_skipped == 3 and report.files_received == 8
    assert sum("not a regular file" in w for w in warnings) == 3, warnings
    for fifo in fifos:
        os.unlink(fifo)
    os.unlink(run.path("code") / "agent.sock")
    assert tree(tmp_path / "pulled") == tree(server)


class _SwapOnRead(LocalTransport):
    """Replaces a listed file by ``make(path)`` right before reading it (as a hostile main node would)."""

    def __init__(self, name: str, make: Callable[[Path], None]) -> None:
        super().__init__()
        self.name_to_swap, self.make = name, make

    def read(self, rpath: str, sink, offset: int, limit: Optional[int] = None) -> int:
        path = Path(rpath)
        if path.name == self.name_to_swap and path.is_file():
            path.unlink()
            self.make(path)
        return super().read(rpath, sink, offset, limit)

    def fork(self) -> "_SwapOnRead":
        return _SwapOnRead(self.name_to_swap, self.make)


@pytest.mark.parametrize("make", [os.mkfifo, lambda p: (p.mkdir(), (p / "inner").write_bytes(b"x"))],
                         ids=["fifo", "folder"])
def test_a_file_replaced_after_the_listing_is_skipped(make_run, tmp_path: Path, make) -> None:
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    warnings: List[str] = []
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(server)), tmp_path / "pulled",
                       warn=warnings.append, connect=lambda: _SwapOnRead("log.txt", make))
    report = _finishes(syncer.pull, [run.log_dir / "log.txt"])
    assert report.files_skipped == 1 and report.files_received == 7
    assert any("log.txt" in w and "not a regular file" in w for w in warnings), warnings
    assert not list((tmp_path / "pulled").rglob(".*.rla-part"))


def test_real_sshd_skips_a_fifo(sshd, make_run, tmp_path: Path) -> None:
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    fifo = run.log_dir / "pipe.csv"
    os.mkfifo(fifo)
    warnings: List[str] = []
    syncer = RunSyncer(sftp_settings(sshd, server, timeout=5.0), tmp_path / "pulled", warn=warnings.append)
    report = _finishes(syncer.pull, [fifo])
    assert report.files_skipped == 1 and report.files_received == 8  # the run's 8 files, not the FIFO
    assert any("pipe.csv" in w and "not a regular file" in w for w in warnings), warnings


def test_a_file_that_opens_as_a_folder_on_a_hostile_sftp_server_is_skipped(make_run, tmp_path: Path) -> None:
    server_root = tmp_path / "server"
    make_run(RUN_NAMES[0], root=server_root / "db")
    hostile = HostileSFTPServer(server_root, {f"/db/log/{DAY}/{RUN_NAMES[0]}": [Fake("swapped.csv",
                                                                                       opens_as="dir")]}, tmp_path)
    try:
        remote = settings(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=hostile.port, username="root",
                          key_filename=str(hostile.client_key), known_hosts=str(hostile.known_hosts),
                          allow_agent=False, remote_data_root="/db")
        warnings: List[str] = []
        report = RunSyncer(remote, tmp_path / "pulled", warn=warnings.append).pull()
    finally:
        hostile.close()
    assert report.files_skipped == 1 and report.files_received == 8
    assert any("swapped.csv" in w and "not a regular file" in w for w in warnings), warnings
    assert tree(tmp_path / "pulled") == tree(server_root / "db")


def test_a_local_folder_in_the_way_skips_that_file_only(make_run, tmp_path: Path) -> None:
    server = tmp_path / "main_db"
    make_run(RUN_NAMES[0], root=server)
    blocked = tmp_path / "pulled" / "log" / DAY / RUN_NAMES[0] / "progress.csv"
    (blocked / "mine").mkdir(parents=True)
    remote = settings(file_transfer_protocol="local", remote_data_root=str(server))
    warnings: List[str] = []
    report = RunSyncer(remote, tmp_path / "pulled", warn=warnings.append).pull()
    assert report.files_skipped == 1 and report.files_received == 7
    assert any("progress.csv" in w and "folder is in the way" in w for w in warnings), warnings
    assert not list((tmp_path / "pulled").rglob(".*.rla-part"))
    shutil.rmtree(blocked)
    assert RunSyncer(remote, tmp_path / "pulled").pull().files_received == 1
    assert tree(tmp_path / "pulled") == tree(server)
