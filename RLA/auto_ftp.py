"""The original's ``RLA.auto_ftp`` (``ftp_factory``, ``FTPHandler``, ``SFTPHandler``) over RLA's
sync transports (:mod:`RLA.sync`).

What changed, on purpose: one connection per handler (the original reconnected for every
uploaded file), the password never appears in a message, failures are
:class:`RLA.errors.TransportError` / ``AuthError``, downloads land in a temporary file
renamed into place, and SFTP checks the server's host key against ``known_hosts`` (the
original turned verification off; pass ``host_key_policy='trust_on_first_use'`` to accept a
new server once).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import tempfile
from pathlib import Path
from typing import Any

from RLA.const import FTP_PROTOCOL_NAME
from RLA.easy_log import logger
from RLA.errors import RLAError


def _ignore_rules(path: str | None) -> list[str]:
    """The glob lines of an ignore file (blank lines and ``#`` comments dropped)."""
    if path is None:
        return []
    lines = Path(path).read_text().splitlines()
    return [line.rstrip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


class FTPHandler:
    """Upload and download files on the main node over FTP (one session, closed by :meth:`close`)."""

    protocol = FTP_PROTOCOL_NAME.FTP

    def __init__(
        self,
        ftp_server: str,
        username: str,
        password: str,
        port: None | int | str = None,
        ignore: str | None = None,
        **options: Any,
    ) -> None:
        self.ftp_server, self.username, self.port, self.ignore = ftp_server, username, port, ignore
        self.ignore_rules = _ignore_rules(ignore)
        self.transport = self._connect(ftp_server, username, password, port, options)
        logger.info("login success.")

    def _connect(self, server: str, username: str, password: str, port: Any, options: Any) -> Any:
        from RLA.sync.ftp import FTPTransport

        return FTPTransport(
            server,
            port=int(port) if port not in (None, "") else None,
            username=username,
            password=password,
            **options,
        )

    def ignore_match(self, files: list[str]) -> list[str]:
        """``files`` without the names an ignore rule matches (``fnmatch``)."""
        return [n for n in files if not any(fnmatch.fnmatch(n, rule) for rule in self.ignore_rules)]

    def upload_file(self, remote_dir: str, local_dir: str, local_file: str) -> int:
        """Copy ``local_dir/local_file`` to ``remote_dir/local_file`` (folders created); returns bytes sent."""
        remote_dir = remote_dir.replace("\\", "/")
        self.transport.makedirs(remote_dir)
        return self.transport.put(os.path.join(local_dir, local_file), posixpath.join(remote_dir, local_file))

    def download_file(self, remote_file: str, local_file: str) -> bool:
        """Fetch ``remote_file`` unless ``local_file`` already has its size; True when fetched."""
        remote = self.transport.stat(remote_file)
        if remote is None:
            raise RLAError(
                f"No remote file {remote_file}",
                expected="a file on the main node",
                found="nothing at that path",
                fix="list the folder with all_file_search first",
            )
        if os.path.isfile(local_file) and os.path.getsize(local_file) == remote.size:
            logger.info(f"skip download file {remote_file}")
            return False
        folder = os.path.dirname(os.path.abspath(local_file))
        os.makedirs(folder, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".download-")
        try:
            with os.fdopen(handle, "wb") as sink:
                self.transport.get(remote_file, sink)
            os.replace(temp, local_file)
        except BaseException:
            os.unlink(temp)
            raise
        logger.info(f"new file {local_file}")
        return True

    def get_dir(self, path: str) -> str:
        """The folder part of a ``/``-separated path."""
        return "/".join(path.split("/")[:-1])

    def download_files(self, files: list[str], remote_root: str, local_root: str) -> None:
        """Fetch each ``remote_root + f`` to ``local_root + f`` (the original's string joins)."""
        for name in files:
            self.download_file(remote_root + name, local_root + name)

    def all_file_search(self, root_path: str, files: list[str], filter_length: int) -> None:
        """Append to ``files`` every remote file below ``root_path``, cut by ``filter_length`` characters."""
        root = root_path.rstrip("/") or "/"
        for rel, entry in self.transport.walk(root):
            if not entry.is_dir:
                files.append(posixpath.join(root, rel)[filter_length:])

    def close(self) -> None:
        """End the session (again: nothing)."""
        self.transport.close()

    def __enter__(self) -> FTPHandler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SFTPHandler(FTPHandler):
    """The same over SFTP (paramiko); the host key is checked (see the module docstring)."""

    protocol = FTP_PROTOCOL_NAME.SFTP

    def __init__(
        self,
        sftp_server: str,
        username: str,
        password: str,
        port: None | int | str = None,
        ignore: str | None = None,
        **options: Any,
    ) -> None:
        self.sftp_server = sftp_server
        super().__init__(sftp_server, username, password, port, ignore, **options)

    def _connect(self, server: str, username: str, password: str, port: Any, options: Any) -> Any:
        from RLA.sync.sftp import SFTPTransport

        return SFTPTransport(
            server,
            port=int(port) if port not in (None, "") else None,
            username=username,
            password=password or None,
            **options,
        )


def ftp_factory(
    name: str,
    server: str,
    username: str,
    password: str,
    port: None | int | str = None,
    ignore: str | None = None,
    **options: Any,
) -> FTPHandler:
    """An :class:`FTPHandler` (``name='ftp'``) or :class:`SFTPHandler` (``'sftp'``), connected.

    Raises:
        RLAError: an unknown protocol; TransportError / AuthError: the connection failed.
    """
    if name == FTP_PROTOCOL_NAME.FTP:
        return FTPHandler(server, username, password, port, ignore, **options)
    if name == FTP_PROTOCOL_NAME.SFTP:
        return SFTPHandler(server, username, password, port, ignore, **options)
    raise RLAError(
        f"Unknown file transfer protocol {name!r}",
        expected="'ftp' or 'sftp'",
        found=repr(name),
        fix="set REMOTE_SETTING.file_transfer_protocol to ftp or sftp",
    )


__all__ = ["FTPHandler", "SFTPHandler", "ftp_factory"]
