"""``SFTPTransport``: the main node over SSH/SFTP (paramiko), with host-key verification."""

from __future__ import annotations

import base64
import errno
import hashlib
import os
import stat as stat_mod
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

from RLA.errors import AuthError, TransportError
from RLA.sync.base import (
    CHUNK,
    PERMISSION_BITS,
    RemoteEntry,
    RemoteFileError,
    RemoteStat,
    Source,
    Transport,
    WriteResult,
    copy_stream,
    is_special_mode,
)
from RLA.sync.session import SessionTransport, described

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


def fingerprint(key: Any) -> str:
    """OpenSSH's ``SHA256:...`` fingerprint of a paramiko public key."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def _policy(mode: str, known_hosts: Path, warn: Optional[Callable[[str], None]]) -> Any:
    """A paramiko missing-host-key policy: reject with the fingerprint, or record the key."""
    import paramiko

    class _HostKeyPolicy(paramiko.MissingHostKeyPolicy):
        def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
            fp = fingerprint(key)
            if mode != "trust_on_first_use":
                raise AuthError(
                    f"The SSH host key of {hostname} is not in {known_hosts}",
                    expected="a host key recorded in known_hosts",
                    found=f"{key.get_name()} key {fp}",
                    fix=f"check the fingerprint on the main node (ssh-keygen -lf "
                    f"/etc/ssh/ssh_host_*_key.pub), then add it with `ssh-keyscan -p PORT "
                    f"HOST >> {known_hosts}`, or set REMOTE_SETTING.host_key_policy: "
                    f"trust_on_first_use",
                )
            client.get_host_keys().add(hostname, key.get_name(), key)
            known_hosts.parent.mkdir(parents=True, exist_ok=True)
            with open(known_hosts, "a", encoding="ascii") as handle:
                handle.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
            if warn is not None:
                warn(
                    f"trusted the new SSH host key of {hostname} ({key.get_name()} {fp}) on first use; "
                    f"recorded in {known_hosts}"
                )

    return _HostKeyPolicy()


@contextmanager
def _closed_once(handle: Any) -> Iterator[Any]:
    """Use a paramiko file in a ``with`` block and close it once, even when its connection died.

    paramiko's ``close`` flushes the write buffer and marks the file closed only when that
    worked: after a dropped connection the file's ``__del__`` would flush again and print
    ``OSError: Socket is closed`` as an ignored exception. The close error still propagates.
    """
    try:
        yield handle
    finally:
        try:
            handle.close()
        except Exception:
            handle._closed = True  # paramiko has no public "discard"; stops __del__ resending
            raise


def _mode_kinds(st_mode: Optional[int]) -> Tuple[Optional[int], bool, bool]:
    """Permission bits (``None`` when the server sent no mode), whether it is a link, whether special."""
    if st_mode is None:
        return None, False, False
    return stat_mod.S_IMODE(st_mode) & PERMISSION_BITS, stat_mod.S_ISLNK(st_mode), is_special_mode(st_mode)


class SFTPTransport(SessionTransport):
    """Files on the main node through one SSH connection.

    Args:
        host: server name or address.
        port: SSH port (default 22).
        username: login (default: the local user).
        password: password (or key passphrase); never stored in messages or ``repr``.
        key_filename: private key file.
        allow_agent: try keys of a running ssh-agent.
        known_hosts: file with the trusted host keys (default ``~/.ssh/known_hosts``).
        host_key_policy: ``reject`` unknown keys or ``trust_on_first_use``.
        timeout: seconds for connecting and for each request.
        warn: called with a message when a host key is trusted on first use.

    Raises:
        AuthError: unknown/changed host key or rejected credentials.
        TransportError: the server cannot be reached or the SSH session fails.
    """

    name = "sftp"
    #: False for a fork: the SSH connection belongs to the transport it was forked from.
    _owns_client = True

    def __init__(
        self,
        host: str,
        port: Optional[int] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        key_filename: Optional[str] = None,
        allow_agent: bool = True,
        known_hosts: Optional[str] = None,
        host_key_policy: str = "reject",
        timeout: float = 30.0,
        warn: Optional[Callable[[str], None]] = None,
    ) -> None:
        super().__init__()
        import paramiko

        self.host, self.port, self.username = host, int(port or 22), username
        self._secret = password
        self._where = f"{username + '@' if username else ''}{host}:{self.port}"
        known = Path(os.path.expanduser(known_hosts or DEFAULT_KNOWN_HOSTS))
        self._client = paramiko.SSHClient()
        policy = _policy(host_key_policy, known, warn)
        options = dict(
            username=username,
            password=password,
            key_filename=os.path.expanduser(key_filename) if key_filename else None,
            allow_agent=allow_agent,
            look_for_keys=key_filename is None and password is None,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
        )
        self._sftp = self._connect(known, policy, options, timeout)

    def _connect(self, known: Path, policy: Any, options: Dict[str, Any], timeout: float) -> Any:
        """Check the host key, log in and open the SFTP channel; every failure closes the
        client and is an RLA error."""
        import paramiko

        where, password = self._where, self._secret
        try:
            if known.is_file():
                self._client.load_host_keys(str(known))
            self._client.set_missing_host_key_policy(policy)
            self._client.connect(self.host, self.port, **options)
            sftp = self._client.open_sftp()
            sftp.get_channel().settimeout(timeout)
            return sftp
        except AuthError:
            self._client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            self._client.close()
            raise AuthError(
                f"The SSH host key of {where} does not match {known}",
                expected=f"{exc.expected_key.get_name()} key {fingerprint(exc.expected_key)}",
                found=f"{exc.key.get_name()} key {fingerprint(exc.key)}",
                fix="if the server was reinstalled, remove its old line from known_hosts "
                "(ssh-keygen -R HOST) and add the new key; otherwise do not connect",
            ) from None
        except paramiko.AuthenticationException as exc:
            self._client.close()
            raise AuthError(
                f"SSH authentication to {where} failed",
                expected="a key listed in the server's authorized_keys, an ssh-agent key, "
                "or the right password in RLA_REMOTE_PASSWORD",
                found=described(exc, password),
                fix="check REMOTE_SETTING.username / key_filename, or set RLA_REMOTE_PASSWORD",
            ) from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            self._client.close()
            raise TransportError(
                f"Cannot open an SFTP session to {where}",
                expected="an SSH server accepting connections",
                found=described(exc, password),
                fix="check ftp_server, port and the network; is sshd running?",
            ) from None

    def stat(self, rpath: str) -> Optional[RemoteStat]:
        try:
            attrs = self._sftp.lstat(rpath)
        except FileNotFoundError:
            return None
        except Exception as exc:  # noqa: BLE001 - paramiko raises IOError/SSHException/EOFError
            raise self._fail("stat", rpath, exc) from exc
        return RemoteStat(int(attrs.st_size or 0), attrs.st_mtime, *_mode_kinds(attrs.st_mode))

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        try:
            attrs = self._sftp.listdir_attr(rpath)
        except FileNotFoundError:
            return []
        except Exception as exc:  # noqa: BLE001
            raise self._fail("list", rpath, exc) from exc
        # READDIR reports a link as itself (lstat), so a link is never taken for its target.
        return [
            RemoteEntry(
                a.filename,
                stat_mod.S_ISDIR(a.st_mode or 0),
                int(a.st_size or 0),
                a.st_mtime,
                *_mode_kinds(a.st_mode),
            )
            for a in attrs
        ]

    def mkdir(self, rpath: str) -> None:
        try:
            self._sftp.mkdir(rpath)
        except OSError as exc:
            try:
                attrs = self._sftp.stat(rpath)
            except Exception:  # noqa: BLE001 - report the mkdir failure
                raise self._fail("create directory", rpath, exc) from exc
            if not stat_mod.S_ISDIR(attrs.st_mode or 0):
                raise self._fail("create directory (a file is in the way)", rpath, exc) from exc
        except Exception as exc:  # noqa: BLE001
            raise self._fail("create directory", rpath, exc) from exc

    def write(
        self,
        rpath: str,
        source: Source,
        offset: int,
        length: int,
        mtime: Optional[float] = None,
        expect_size: Optional[int] = None,
        mode: Optional[int] = None,
    ) -> WriteResult:
        # Size checks and times go through the open handle (FSTAT/FSETSTAT): fewer and
        # smaller requests than path-based STAT/SETSTAT (issue 5's byte budget).
        try:
            create = offset == 0 and expect_size is None
            with _closed_once(self._sftp.open(rpath, "wb" if create else "r+b", bufsize=CHUNK)) as handle:
                found: Optional[Any] = None
                if expect_size is not None:
                    found = handle.stat()
                    if int(found.st_size or 0) != expect_size:
                        return WriteResult(0, int(found.st_size or 0))
                if mode is not None and (found is None or stat_mod.S_IMODE(found.st_mode or 0) != mode):
                    handle.chmod(mode)  # before the first byte: a 0600 file is never readable by others
                handle.set_pipelined(True)
                if offset:
                    handle.seek(offset)
                sent = copy_stream(source, handle.write, length)
                handle.flush()
                size = int(handle.stat().st_size or 0)
                if mtime is not None:
                    handle.utime((mtime, mtime))
            return WriteResult(sent, size)
        except FileNotFoundError:
            if expect_size is not None:
                return WriteResult(0, -1)
            raise self._fail("write", rpath, FileNotFoundError(rpath)) from None
        except Exception as exc:  # noqa: BLE001
            raise self._fail("write", rpath, exc) from exc

    def read(self, rpath: str, sink: IO[bytes], offset: int, limit: Optional[int] = None) -> int:
        try:
            handle = self._sftp.open(rpath, "rb")
        except (FileNotFoundError, PermissionError) as exc:
            raise self._unreadable(rpath, f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # noqa: BLE001
            raise self._fail("read", rpath, exc) from exc
        try:
            with handle:
                opened = handle.stat()
                if opened.st_mode and not stat_mod.S_ISREG(
                    opened.st_mode
                ):  # listed as a file, opened as other
                    raise RemoteFileError(
                        f"SFTP refuses {rpath} on {self._where}: it is not a regular file",
                        expected="a regular file",
                        found=f"mode {opened.st_mode:o}",
                        fix="pull again; remove it on the main node if it stays",
                    )
                length = max(0, int(opened.st_size or 0) - offset)
                if limit is not None:
                    length = min(length, limit)  # the server's size claim never decides alone
                handle.seek(offset)
                handle.prefetch(offset + length)
                return copy_stream(handle, sink.write, length)
        except RemoteFileError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._fail("read", rpath, exc) from exc

    def rename(self, src: str, dst: str) -> None:
        try:
            self._sftp.posix_rename(src, dst)  # OpenSSH extension: replaces dst atomically
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, OSError) and exc.errno not in (None, errno.EOPNOTSUPP):
                raise self._fail("rename", src, exc) from exc
            # servers without posix-rename: remove, then plain rename
            self._rename_over(src, dst, lambda: self._sftp.rename(src, dst))

    def remove(self, rpath: str) -> None:
        try:
            self._sftp.remove(rpath)
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001
            raise self._fail("remove", rpath, exc) from exc

    def set_mtime(self, rpath: str, mtime: float) -> None:
        try:
            self._sftp.utime(rpath, (mtime, mtime))
        except Exception as exc:  # noqa: BLE001
            raise self._fail("set the time of", rpath, exc) from exc

    def fork(self) -> Optional["SFTPTransport"]:
        """A second SFTP session (SSH channel) on the same connection."""
        twin = object.__new__(SFTPTransport)
        Transport.__init__(twin)
        twin.host, twin.port, twin.username = self.host, self.port, self.username
        twin._secret, twin._where, twin._client, twin._owns_client = (
            self._secret,
            self._where,
            self._client,
            False,
        )
        try:
            twin._sftp = self._client.open_sftp()
            twin._sftp.get_channel().settimeout(self._sftp.get_channel().gettimeout())
        except Exception as exc:  # noqa: BLE001
            raise self._fail("open another channel to", self._where, exc) from exc
        twin._known_dirs = self._known_dirs  # directories are shared knowledge (set ops are atomic)
        return twin

    def _close(self) -> None:
        try:
            self._sftp.close()
        except Exception:  # noqa: BLE001 - the connection may already be gone
            pass
        if self._owns_client:
            self._client.close()
