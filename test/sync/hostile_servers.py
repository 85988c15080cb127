"""Hostile sync servers for the tests: an SFTP server (paramiko) and an FTP server (pyftpdlib).

Both serve a real folder of good runs and add crafted entries a real server would never
list: names with ``..``, ``/``, control characters, links, files that lie about their size.
A crafted name is also *served* (listing and content), so a client that trusted it would
really write outside its data root; the tests check that nothing appears there.
"""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

#: Bytes an "endless" crafted file streams at most (a bounded loop, yet far over any cap tested).
ENDLESS = 64 * 1024 * 1024


@dataclass
class Fake:
    """A crafted entry: ``kind`` is file, dir or link; ``claimed`` is the size it lists.

    ``opens_as`` (SFTP): the kind the opened handle reports, different from the listing
    (a file replaced by a folder between listing and reading); its reads then fail.
    """

    name: str
    kind: str = "file"
    data: bytes = b"owned\n"
    claimed: Optional[int] = None
    endless: bool = False
    mode: int = 0o644
    children: List["Fake"] = field(default_factory=list)
    opens_as: Optional[str] = None

    @property
    def listed_size(self) -> int:
        return self.claimed if self.claimed is not None else len(self.data)


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hostile", "-f", str(path)],
                   check=True, timeout=30)


class _Overlay:
    """The real folder ``root`` (served as ``/``) plus crafted entries under some of its folders."""

    def __init__(self, root: Path, extra: Dict[str, List[Fake]]) -> None:
        self.root = root
        self.fakes: Dict[str, Fake] = {}   # client path (as the client joins it) -> fake
        self.extra: Dict[str, List[Fake]] = {}
        for folder, fakes in extra.items():
            self._add(folder.rstrip("/") or "/", fakes)

    def _add(self, folder: str, fakes: List[Fake]) -> None:
        self.extra.setdefault(folder, []).extend(fakes)
        for fake in fakes:
            path = fake.name if fake.name.startswith("/") else f"{folder.rstrip('/')}/{fake.name}"
            self.fakes[path] = fake
            if fake.children:
                self._add(path, fake.children)

    def real(self, path: str) -> Optional[Path]:
        """The real file behind a client path, never outside ``root``."""
        candidate = (self.root / path.lstrip("/")).resolve()
        return candidate if candidate == self.root or self.root in candidate.parents else None


def _attrs(name: str, st_mode: int, size: int) -> object:
    import paramiko

    attrs = paramiko.SFTPAttributes()
    attrs.filename, attrs.st_mode, attrs.st_size = name, st_mode, size
    attrs.st_mtime = attrs.st_atime = 1_767_225_600
    attrs.st_uid = attrs.st_gid = 0
    return attrs


def _fake_mode(fake: Fake) -> int:
    kinds = {"file": stat.S_IFREG, "dir": stat.S_IFDIR, "link": stat.S_IFLNK}
    return kinds[fake.kind] | fake.mode


def _sftp_interface(overlay: _Overlay) -> type:
    import paramiko

    class Handle(paramiko.SFTPHandle):
        def __init__(self, fake: Optional[Fake], real: Optional[Path]) -> None:
            super().__init__(0)
            self.fake, self.real_path = fake, real

        def stat(self) -> object:
            if self.fake is not None and self.fake.opens_as is not None:
                return _attrs("", _fake_mode(Fake(self.fake.name, self.fake.opens_as)), 4096)
            if self.fake is not None:  # an endless file claims its real (huge) size once opened
                size = ENDLESS if self.fake.endless else self.fake.listed_size
                return _attrs("", _fake_mode(self.fake), size)
            return paramiko.SFTPAttributes.from_stat(os.stat(self.real_path))

        def read(self, offset: int, length: int) -> object:
            if self.fake is not None and self.fake.opens_as is not None:
                return paramiko.SFTP_FAILURE  # as sftp-server reading a folder (EISDIR)
            if self.fake is not None and self.fake.endless:
                return b"A" * max(0, min(length, ENDLESS - offset))
            if self.fake is not None:
                return self.fake.data[offset:offset + length]
            with open(self.real_path, "rb") as handle:
                handle.seek(offset)
                return handle.read(length)

    class Interface(paramiko.SFTPServerInterface):
        def list_folder(self, path: str) -> object:
            real = overlay.real(path)
            out = []
            if real is not None and real.is_dir():
                out = [paramiko.SFTPAttributes.from_stat(os.lstat(real / n), n) for n in os.listdir(real)]
            out += [_attrs(f.name, _fake_mode(f), f.listed_size) for f in overlay.extra.get(path.rstrip("/"), [])]
            return out if out or (real is not None and real.is_dir()) else paramiko.SFTP_NO_SUCH_FILE

        def lstat(self, path: str) -> object:
            fake = overlay.fakes.get(path)
            if fake is not None:
                return _attrs(os.path.basename(path), _fake_mode(fake), fake.listed_size)
            real = overlay.real(path)
            if real is None or not os.path.lexists(real):
                return paramiko.SFTP_NO_SUCH_FILE
            return paramiko.SFTPAttributes.from_stat(os.lstat(real))

        stat = lstat

        def open(self, path: str, flags: int, attr: object) -> object:
            if flags & (os.O_WRONLY | os.O_RDWR):
                return paramiko.SFTP_PERMISSION_DENIED
            fake = overlay.fakes.get(path)
            if fake is not None:
                return Handle(fake, None)
            real = overlay.real(path)
            return Handle(None, real) if real is not None and real.is_file() else paramiko.SFTP_NO_SUCH_FILE

    return Interface


class _Auth:
    """Accepts any user and key: the server is the attacker, not the client."""

    def __new__(cls) -> object:
        import paramiko

        class Server(paramiko.ServerInterface):
            def get_allowed_auths(self, username: str) -> str:
                return "publickey"

            def check_auth_publickey(self, username: str, key: object) -> int:
                return paramiko.AUTH_SUCCESSFUL

            def check_channel_request(self, kind: str, chanid: int) -> int:
                return paramiko.OPEN_SUCCEEDED

        return Server()


class HostileSFTPServer:
    """A paramiko SFTP server on 127.0.0.1 that serves ``root`` plus crafted entries."""

    def __init__(self, root: Path, extra: Dict[str, List[Fake]], workdir: Path) -> None:
        import paramiko

        keygen(workdir / "hostile_host_key")
        keygen(workdir / "hostile_client_key")
        self.client_key = workdir / "hostile_client_key"
        self._host_key = paramiko.Ed25519Key.from_private_key_file(str(workdir / "hostile_host_key"))
        self._interface = _sftp_interface(_Overlay(root, extra))
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.known_hosts = workdir / "hostile_known_hosts"
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {self._host_key.get_name()} "
                                    f"{self._host_key.get_base64()}\n")
        self._stop = threading.Event()
        self._transports: List[object] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import paramiko

        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            transport = paramiko.Transport(conn)
            transport.add_server_key(self._host_key)
            transport.set_subsystem_handler("sftp", paramiko.SFTPServer, self._interface)
            transport.start_server(server=_Auth())
            self._transports.append(transport)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for transport in self._transports:
            transport.close()  # type: ignore[attr-defined]
        self._sock.close()


def hostile_ftp_handler(home: Path, extra: Dict[str, List[Fake]]) -> type:
    """A pyftpdlib handler class whose MLSD adds crafted lines and whose filesystem serves them."""
    from pyftpdlib.filesystems import AbstractedFS
    from pyftpdlib.handlers import FTPHandler

    overlay = _Overlay(home, extra)
    payload = home.parent / "ftp_payloads"
    payload.mkdir(exist_ok=True)
    served: Dict[str, str] = {}  # raw client path of a crafted entry -> what the server really opens
    for index, (path, fake) in enumerate(sorted(overlay.fakes.items())):
        target = payload / f"p{index}"
        if fake.kind == "dir":
            target.mkdir(exist_ok=True)
        elif fake.endless:
            with open(target, "wb") as handle:
                handle.truncate(ENDLESS)  # sparse: costs no disk
        else:
            target.write_bytes(fake.data)
        served[path] = str(target)
    crafted_dirs = {real: raw for raw, real in served.items() if overlay.fakes[raw].kind == "dir"}

    class FS(AbstractedFS):
        def ftp2fs(self, ftppath: str) -> str:
            return served.get(ftppath) or super().ftp2fs(ftppath)

        def validpath(self, path: str) -> bool:
            return path.startswith(str(payload)) or super().validpath(path)

    def mlsx_line(fake: Fake) -> bytes:
        kind = {"file": "file", "dir": "dir", "link": "OS.unix=slink:/etc"}[fake.kind]
        return (f"type={kind};size={fake.listed_size};modify=20260101000000;unix.mode={fake.mode:o}; "
                f"{fake.name}\r\n").encode("utf-8", "surrogateescape")

    class Handler(FTPHandler):
        abstracted_fs = FS

        def ftp_MLSD(self, path: str) -> Optional[str]:
            rel = crafted_dirs.get(path)
            if rel is None and path.startswith(str(home)):
                rel = "/" + Path(path).relative_to(home).as_posix()
            lines: List[bytes] = []
            if path not in crafted_dirs and self.fs.isdir(path):
                perms = self.authorizer.get_perms(self.username)
                lines = list(self.fs.format_mlsx(path, self.fs.listdir(path), perms, self._current_facts))
            lines += [mlsx_line(f) for f in overlay.extra.get(rel, [])]
            if not lines and not self.fs.isdir(path):
                self.respond("501 No such directory.")
                return None
            self.push_dtp_data(b"".join(lines), cmd="MLSD")
            return path

    return Handler
