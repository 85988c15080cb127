"""``FTPTransport``: the main node over FTP (stdlib ftplib), on any port."""

from __future__ import annotations

import calendar
import ftplib
import io
import time
from typing import IO, Callable, Dict, List, Optional, Tuple

from RLA.errors import AuthError, TransportError
from RLA.sync.base import (
    CHUNK,
    PERMISSION_BITS,
    RemoteEntry,
    RemoteStat,
    Source,
    WriteResult,
)
from RLA.sync.secrets import scrub
from RLA.sync.session import SessionTransport, described

_FAILURES = (ftplib.Error, OSError, EOFError)
_FACTS = ["type", "size", "modify", "unix.mode"]


class _Limited:
    """A read-only view of the next ``length`` bytes of a stream (counts what was read)."""

    def __init__(self, source: Source, length: int) -> None:
        self.source, self.left, self.done = source, length, 0

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.source.read(size)
        self.left -= len(data)
        self.done += len(data)
        return data


def _parse_modify(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        return float(calendar.timegm(time.strptime(value[:14], "%Y%m%d%H%M%S")))
    except ValueError:
        return None


def _parse_mode(value: Optional[str]) -> Optional[int]:
    """``unix.mode`` (octal text) as permission bits, ``None`` when absent or malformed."""
    try:
        return int(value, 8) & PERMISSION_BITS if value else None
    except ValueError:
        return None


def _entry_kind(facts: Dict[str, str]) -> Tuple[str, bool]:
    """The ``type`` fact (lowercase) and whether it names a symbolic link (``OS.unix=slink:...``)."""
    kind = facts.get("type", "file").lower()
    return kind, kind.startswith("os.unix=symlink") or kind.startswith("os.unix=slink")


def _size(facts: Dict[str, str]) -> int:
    try:
        return max(0, int(facts.get("size", 0) or 0))
    except ValueError:
        return 0


class FTPTransport(SessionTransport):
    """Files on the main node through one FTP control connection (binary mode).

    Appends and resumed uploads use ``REST`` + ``STOR``; listings use ``MLSD``/``MLST`` (with the
    ``unix.mode`` fact); file modes are set with ``SITE CHMOD``.
    FTP sends the password in clear text: prefer SFTP outside trusted networks.

    Args:
        host: server name or address.
        port: FTP port (default 21).
        username: login (default ``anonymous``).
        password: password; never stored in messages or ``repr``.
        timeout: seconds for connecting and for each reply.
        warn: receives non-fatal warnings (a server that refuses ``SITE CHMOD``).

    Raises:
        AuthError: login refused.
        TransportError: the server cannot be reached.
    """

    name = "ftp"
    _failures = _FAILURES

    def __init__(
        self,
        host: str,
        port: Optional[int] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        timeout: float = 30.0,
        warn: Optional[Callable[[str], None]] = None,
        **_ignored: object,
    ) -> None:
        super().__init__()
        self._warn, self._chmod_refused = warn, False
        self.host, self.port, self.username = host, int(port or 21), username or "anonymous"
        self._secret = password
        self._where = f"{self.username}@{host}:{self.port}"
        self._ftp = ftplib.FTP(timeout=timeout)
        try:
            self._ftp.connect(host, self.port)
        except _FAILURES as exc:
            self._ftp.close()
            raise TransportError(
                f"Cannot connect to the FTP server {host}:{self.port}",
                expected="an FTP server accepting connections",
                found=f"{type(exc).__name__}: {exc}",
                fix="check ftp_server, port and the network",
            ) from None
        try:
            self._ftp.login(self.username, password or "")
            self._ftp.voidcmd("TYPE I")
        except ftplib.error_perm as exc:
            self._ftp.close()
            raise AuthError(
                f"FTP login to {self._where} failed",
                expected="a valid username and password",
                found=scrub(str(exc), password),
                fix="check REMOTE_SETTING.username and RLA_REMOTE_PASSWORD",
            ) from None
        except _FAILURES as exc:
            self._ftp.close()
            raise TransportError(
                f"FTP login to {self._where} failed",
                expected="a working FTP session",
                found=described(exc, password),
                fix="check the server, then sync again",
            ) from None

    def stat(self, rpath: str) -> Optional[RemoteStat]:
        try:
            reply = self._ftp.sendcmd(f"MLST {rpath}")
        except ftplib.error_perm:
            return None
        except _FAILURES as exc:
            raise self._fail("stat", rpath, exc) from exc
        facts_line = next((line.strip() for line in reply.splitlines()[1:] if ";" in line), "")
        facts = dict(part.split("=", 1) for part in facts_line.split(";") if "=" in part)
        facts = {k.lower(): v for k, v in facts.items()}
        kind, link = _entry_kind(facts)
        if kind in ("dir", "cdir", "pdir"):
            return None
        return RemoteStat(
            _size(facts),
            _parse_modify(facts.get("modify")),
            _parse_mode(facts.get("unix.mode")),
            link,
            kind != "file" and not link,
        )

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        try:
            rows = list(self._ftp.mlsd(rpath, facts=_FACTS))
        except ftplib.error_perm:
            return []
        except _FAILURES as exc:
            raise self._fail("list", rpath, exc) from exc
        out = []
        for name, facts in rows:
            kind, link = _entry_kind(facts)
            if kind in ("cdir", "pdir") or name in (".", ".."):
                continue
            out.append(
                RemoteEntry(
                    name,
                    kind == "dir",
                    _size(facts),
                    _parse_modify(facts.get("modify")),
                    _parse_mode(facts.get("unix.mode")),
                    link,
                    kind not in ("file", "dir") and not link,
                )
            )
        return out

    def mkdir(self, rpath: str) -> None:
        try:
            self._ftp.mkd(rpath)
        except ftplib.error_perm as exc:
            try:
                self._ftp.sendcmd(f"MLST {rpath}")  # exists already?
            except _FAILURES:
                raise self._fail("create directory", rpath, exc) from exc
        except _FAILURES as exc:
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
        if expect_size is not None:
            found = self.stat(rpath)
            if found is None or found.size != expect_size:
                return WriteResult(0, found.size if found else -1)
        narrowed = False
        if mode is not None and offset == 0 and mode & 0o044 != 0o044:
            # A private file is created empty and narrowed before its bytes travel.
            self._call("write", rpath, lambda: self._ftp.storbinary(f"STOR {rpath}", io.BytesIO(b"")))
            narrowed = self._chmod(rpath, mode)
        reader = _Limited(source, length)
        self._call(
            "write",
            rpath,
            lambda: self._ftp.storbinary(f"STOR {rpath}", reader, blocksize=CHUNK, rest=offset or None),
        )
        if mtime is not None:
            self.set_mtime(rpath, mtime)
        after = self.stat(rpath)
        if mode is not None and not narrowed and (after is None or after.mode != mode):
            self._chmod(rpath, mode)
        return WriteResult(reader.done, after.size if after else -1)

    def _chmod(self, rpath: str, mode: int) -> bool:
        """``SITE CHMOD``; a server without it gets one warning per connection."""
        try:
            self._ftp.sendcmd(f"SITE CHMOD {mode & PERMISSION_BITS:o} {rpath}")
            return True
        except ftplib.error_perm as exc:
            if not self._chmod_refused and self._warn is not None:
                self._warn(
                    f"the FTP server {self._where} refused SITE CHMOD ({scrub(str(exc), self._secret)}); "
                    f"pushed files get its default mode instead of their own"
                )
            self._chmod_refused = True
            return False
        except _FAILURES as exc:
            raise self._fail("set the mode of", rpath, exc) from exc

    def read(self, rpath: str, sink: IO[bytes], offset: int, limit: Optional[int] = None) -> int:
        """``RETR`` from ``offset``; with ``limit`` the data connection is closed at that many bytes."""
        try:
            self._ftp.voidcmd("TYPE I")  # MLSD (retrlines) switched the session to ASCII
            conn = self._ftp.transfercmd(f"RETR {rpath}", rest=offset or None)
        except ftplib.error_perm as exc:
            raise self._unreadable(rpath, scrub(str(exc), self._secret)) from None
        except _FAILURES as exc:
            raise self._fail("read", rpath, exc) from exc
        got, cut = 0, False
        try:
            with conn:
                while limit is None or got < limit:
                    data = conn.recv(CHUNK if limit is None else min(CHUNK, limit - got))
                    if not data:
                        break
                    sink.write(data)
                    got += len(data)
                else:
                    cut = True
        except _FAILURES as exc:
            raise self._fail("read", rpath, exc) from exc
        try:
            self._ftp.voidresp()
        except (ftplib.error_temp, ftplib.error_perm) as exc:
            if not cut:  # a cut transfer ends with "426 aborted": expected
                raise self._fail("read", rpath, exc) from exc
        except _FAILURES as exc:
            raise self._fail("read", rpath, exc) from exc
        return got

    def rename(self, src: str, dst: str) -> None:
        try:
            self._ftp.rename(src, dst)
        except ftplib.error_perm:
            self._rename_over(src, dst, lambda: self._ftp.rename(src, dst))
        except _FAILURES as exc:
            raise self._fail("rename", src, exc) from exc

    def remove(self, rpath: str) -> None:
        try:
            self._ftp.delete(rpath)
        except ftplib.error_perm as exc:
            if self.stat(rpath) is not None:
                raise self._fail("remove", rpath, exc) from exc
        except _FAILURES as exc:
            raise self._fail("remove", rpath, exc) from exc

    def set_mtime(self, rpath: str, mtime: float) -> None:
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(mtime))
        try:
            self._ftp.sendcmd(f"MFMT {stamp} {rpath}")
        except ftplib.error_perm:
            pass  # MFMT is an optional extension; times only help `rla sync pull`
        except _FAILURES as exc:
            raise self._fail("set the time of", rpath, exc) from exc

    def _close(self) -> None:
        try:
            self._ftp.quit()
        except _FAILURES:
            pass
        finally:
            self._ftp.close()
