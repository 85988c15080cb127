"""Helpers of the sync tests: settings builders, server records, tree snapshots."""
from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict

from RLA.config.fields import validate_section
from RLA.config.remote import RemoteSettings

SSHD = "/usr/sbin/sshd"
FTP_USER, FTP_PASSWORD = "rla-worker", "ftp-Secret-4711"
TASK = "demo/sub"
RUN_NAMES = ["10-00-00-000001_127.0.0.1_&seed=1", "11-30-00-000002_127.0.0.1_&seed=2"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class SSHServer:
    """A running sshd: where it listens and the files a client needs."""

    port: int
    client_key: Path
    known_hosts: Path
    host_pub: Path
    process: subprocess.Popen
    workdir: Path

    def session_pids(self) -> list:
        """PIDs of the per-connection sshd processes (children of the listener)."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.process.pid)],
                             capture_output=True, text=True, timeout=10).stdout
        return [int(x) for x in out.split()]


@dataclass
class FTPServerInfo:
    port: int
    home: Path
    server: object


def settings(**raw: object) -> RemoteSettings:
    """Validated REMOTE_SETTING from keyword arguments (as if read from rla_config.yaml)."""
    raw.setdefault("retries", 0)
    raw.setdefault("backoff", 0.0)
    raw.setdefault("timeout", 10.0)
    return validate_section(RemoteSettings, raw, "<test>", prefix="REMOTE_SETTING.")


@dataclass
class Target:
    """A sync target: its settings and the folder on disk that holds its data root."""

    kind: str
    settings: RemoteSettings
    root_on_disk: Path


def sftp_settings(server: SSHServer, remote_root: Path, **extra: object) -> RemoteSettings:
    base = dict(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=server.port, username="root",
                key_filename=str(server.client_key), known_hosts=str(server.known_hosts),
                allow_agent=False, remote_data_root=str(remote_root))
    base.update(extra)
    return settings(**base)


def ftp_settings(server: FTPServerInfo, **extra: object) -> RemoteSettings:
    base = dict(file_transfer_protocol="ftp", ftp_server="127.0.0.1", port=server.port, username=FTP_USER,
                password=FTP_PASSWORD, remote_data_root="/db")
    base.update(extra)
    return settings(**base)


def tree(root: Path, types=("log", "code", "results", "archive_tester")) -> Dict[str, bytes]:
    """Every file below ``root/<type>`` as relative path → bytes.

    Leftover temporary transfer files (``.*.rla-part``) are included, so a torn transfer
    shows up as a difference; other hidden files (the manager's claim locks next to the
    runs) are not run data and are left out.
    """
    out: Dict[str, bytes] = {}
    for data_type in types:
        base = root / data_type
        if not base.exists():
            continue
        for path in base.rglob("*"):
            if path.is_file() and (not path.name.startswith(".") or path.name.endswith(".rla-part")):
                out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out
