"""Real servers for the sync tests: OpenSSH sshd and pyftpdlib on 127.0.0.1, plus run factories."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional

import pytest

from RLA.layout import RunLayout
from s3_server import moto_server, s3_bucket, s3_target  # noqa: F401 - fixtures of the S3 tests
from sync_helpers import (FTP_PASSWORD, FTP_USER, RUN_NAMES, SSHD, TASK, FTPServerInfo, SSHServer, Target,
                          free_port, ftp_settings, settings, sftp_settings, wait_port)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rla-test", "-f", str(path)],
                   check=True, timeout=30)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHServer]:
    """OpenSSH sshd on a free 127.0.0.1 port with a throwaway host key (whole session)."""
    if not os.path.exists(SSHD):
        pytest.skip(f"{SSHD} is absent (install Debian's openssh-server)")
    work = tmp_path_factory.mktemp("sshd")
    _keygen(work / "host_key")
    _keygen(work / "client_key")
    shutil.copy(work / "client_key.pub", work / "authorized_keys")
    port = free_port()
    (work / "sshd_config").write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {work / 'host_key'}
PidFile {work / 'sshd.pid'}
AuthorizedKeysFile {work / 'authorized_keys'}
PermitRootLogin yes
StrictModes no
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
MaxStartups 50
MaxSessions 50
Subsystem sftp internal-sftp
LogLevel ERROR
""")
    if os.geteuid() == 0:
        # sshd run as root needs its privilege-separation dir (Debian's service creates it).
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(work / "sshd_config")],
                            stdout=subprocess.DEVNULL, stderr=open(work / "sshd.log", "wb"))
    try:
        wait_port(port)
        host_pub = work / "host_key.pub"
        algo, key = host_pub.read_text().split()[:2]
        (work / "known_hosts").write_text(f"[127.0.0.1]:{port} {algo} {key}\n")
        yield SSHServer(port, work / "client_key", work / "known_hosts", host_pub, proc, work)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class _DropOnce:
    """Shared switch: the next data transfer after ``arm(n)`` drops the session after n bytes."""

    threshold: Optional[int] = None
    dropped = False


@pytest.fixture
def ftpd(tmp_path: Path) -> Iterator[FTPServerInfo]:
    """pyftpdlib on a free 127.0.0.1 port with one temporary user (home = tmp dir)."""
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import DTPHandler, FTPHandler
    from pyftpdlib.servers import FTPServer

    home = tmp_path / "ftp_home"
    home.mkdir()
    authorizer = DummyAuthorizer()
    authorizer.add_user(FTP_USER, FTP_PASSWORD, str(home), perm="elradfmwMT")

    class DroppingDTP(DTPHandler):
        def handle_read(self) -> None:
            super().handle_read()
            limit = _DropOnce.threshold
            if limit is not None and not _DropOnce.dropped and self.get_transmitted_bytes() >= limit:
                _DropOnce.dropped = True
                self.cmd_channel.close()  # the server drops the whole session

        handle_read_event = handle_read  # the base class aliases its own handle_read

    class Handler(FTPHandler):
        pass

    Handler.authorizer = authorizer
    Handler.dtp_handler = DroppingDTP
    Handler.passive_ports = None
    Handler.banner = "rla test ftpd"
    _DropOnce.threshold, _DropOnce.dropped = None, False
    server = FTPServer(("127.0.0.1", 0), Handler)
    port = server.socket.getsockname()[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.05}, daemon=True)
    thread.start()
    try:
        yield FTPServerInfo(port, home, server)
    finally:
        server.close_all()
        thread.join(timeout=10)


@pytest.fixture
def ftp_drop() -> type:
    """``ftp_drop.threshold = n`` makes the FTP server drop the session after n bytes once."""
    return _DropOnce


@pytest.fixture(params=["local", "ftp", "sftp"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """Each transport in turn, with an empty remote data root."""
    return _make_target(request.param, request, tmp_path)


@pytest.fixture
def target_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], Target]:
    """``target_factory(kind)``: the target of one transport (``s3`` included) for this test."""
    return lambda kind: _make_target(kind, request, tmp_path)


def _make_target(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if kind == "s3":
        return request.getfixturevalue("s3_target")
    if kind == "local":
        root = tmp_path / "remote_db"
        return Target(kind, settings(file_transfer_protocol="local", remote_data_root=str(root)), root)
    if kind == "ftp":
        server = request.getfixturevalue("ftpd")
        return Target(kind, ftp_settings(server), server.home / "db")
    server = request.getfixturevalue("sshd")
    root = tmp_path / "remote_db"
    return Target(kind, sftp_settings(server, root), root)


MakeRun = Callable[..., RunLayout]


@pytest.fixture
def make_run(tmp_path: Path) -> MakeRun:
    """Create a run with typical files under ``tmp_path/data`` (or ``root``)."""

    def make(name: str = RUN_NAMES[0], task: str = TASK, date: str = "2026/03/04",
             root: Optional[Path] = None, size: int = 20_000, extra: Optional[Dict[str, bytes]] = None) -> RunLayout:
        layout = RunLayout(root or tmp_path / "data", task, date, name)
        rng = __import__("random").Random(name)
        files = {
            "log/progress.csv": b"time-step,reward\n" + b"".join(
                f"{i},{rng.random():.6f}\n".encode() for i in range(size // 20)),
            "log/log.txt": b"started\n" * (size // 80),
            "log/run.json": b'{"status": "running"}\n',
            "log/tb/events.out.tfevents.1.host": bytes(rng.getrandbits(8) for _ in range(size // 4)),
            "code/train.py": b"print('hello')\n",
            "code/pkg/parameter.json": b'{"seed": 1}\n',
            "results/0-curve.png": bytes(rng.getrandbits(8) for _ in range(size // 4)),
            "checkpoint/checkpoint-10.pt": b"ckpt" * 100,
        }
        files.update(extra or {})
        for key, data in files.items():
            data_type, _, inner = key.partition("/")
            path = layout.path(data_type) / inner
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        layout.archive_tester_file.parent.mkdir(parents=True, exist_ok=True)
        layout.archive_tester_file.write_text('{"state": 1}\n')
        return layout

    return make


