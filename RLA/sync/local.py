"""``LocalTransport``: a folder acting as the main node (NFS mounts, tests)."""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from typing import IO, List, Optional

from RLA.errors import TransportError
from RLA.safe_paths import NOFOLLOW, NONBLOCK
from RLA.sync.base import (
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


class LocalTransport(Transport):
    """Read and write a remote tree that is a local (or mounted) folder.

    Remote paths are used as local paths, so ``remote_data_root`` is the folder itself.
    A symbolic link is listed as a link and never read or written through, and a file is
    created with the mode it is given (never the wider default of the umask).
    """

    name = "local"

    def __init__(self, **_ignored: object) -> None:
        super().__init__()

    @staticmethod
    def _fail(action: str, rpath: str, exc: OSError) -> TransportError:
        return TransportError(
            f"Local transport could not {action} {rpath}",
            expected="a writable folder",
            found=f"{type(exc).__name__}: {exc.strerror or exc}",
            fix="check that the folder is mounted and writable",
        )

    @staticmethod
    def _link_error(rpath: str) -> TransportError:
        return RemoteFileError(
            f"Local transport refuses {rpath}: it is a symbolic link",
            expected="a plain file",
            found="a symbolic link",
            fix="replace the link by the file on the main node; sync never follows links",
        )

    def stat(self, rpath: str) -> Optional[RemoteStat]:
        try:
            st = os.lstat(rpath)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail("stat", rpath, exc) from exc
        return RemoteStat(
            st.st_size,
            st.st_mtime,
            stat_mod.S_IMODE(st.st_mode),
            stat_mod.S_ISLNK(st.st_mode),
            is_special_mode(st.st_mode),
        )

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        try:
            with os.scandir(rpath) as it:
                out = []
                for entry in it:
                    st = entry.stat(follow_symlinks=False)
                    link = stat_mod.S_ISLNK(st.st_mode)
                    out.append(
                        RemoteEntry(
                            entry.name,
                            stat_mod.S_ISDIR(st.st_mode),
                            st.st_size,
                            st.st_mtime,
                            stat_mod.S_IMODE(st.st_mode),
                            link,
                            is_special_mode(st.st_mode),
                        )
                    )
                return out
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._fail("list", rpath, exc) from exc

    def mkdir(self, rpath: str) -> None:
        try:
            os.mkdir(rpath)
        except FileExistsError:
            if not os.path.isdir(rpath) or os.path.islink(rpath):
                raise TransportError(
                    f"Cannot create directory {rpath}",
                    expected="a directory or nothing",
                    found="a file or a link",
                    fix="remove it on the main node",
                ) from None
        except OSError as exc:
            raise self._fail("create directory", rpath, exc) from exc

    def _open_for_write(self, rpath: str, truncate: bool, mode: Optional[int]) -> int:
        flags = os.O_RDWR | NOFOLLOW | (os.O_CREAT | os.O_TRUNC if truncate else 0)
        try:
            fd = os.open(rpath, flags, 0o666 if mode is None else mode & PERMISSION_BITS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._link_error(rpath) from None
            raise
        if mode is not None:
            os.fchmod(fd, mode & PERMISSION_BITS)  # exactly the mode: an existing file, the umask
        return fd

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
        try:
            fd = self._open_for_write(rpath, offset == 0 and expect_size is None, mode)
            with os.fdopen(fd, "r+b") as handle:
                found = os.fstat(handle.fileno()).st_size
                if expect_size is not None and found != expect_size:
                    return WriteResult(0, found)
                handle.seek(offset)
                sent = copy_stream(source, handle.write, length)
                handle.flush()
                size = os.fstat(handle.fileno()).st_size
                if mtime is not None:
                    os.utime(handle.fileno(), (mtime, mtime))
            return WriteResult(sent, size)
        except FileNotFoundError:
            if expect_size is not None:
                return WriteResult(0, -1)
            raise
        except OSError as exc:
            raise self._fail("write", rpath, exc) from exc

    def read(self, rpath: str, sink: IO[bytes], offset: int, limit: Optional[int] = None) -> int:
        try:  # O_NONBLOCK: a FIFO put there since the listing must not block the open
            fd = os.open(rpath, os.O_RDONLY | NOFOLLOW | NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._link_error(rpath) from None
            if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
                raise RemoteFileError(
                    f"Local transport cannot read {rpath}",
                    expected="a readable file",
                    found=f"{type(exc).__name__}: {exc.strerror}",
                    fix="pull again",
                ) from None
            raise self._fail("read", rpath, exc) from exc
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):  # the opened file itself: no race with the listing
            os.close(fd)
            raise RemoteFileError(
                f"Local transport refuses {rpath}: it is not a regular file",
                expected="a regular file",
                found="a folder, FIFO, socket or device",
                fix="remove it from the main node's run folder",
            )
        try:
            with os.fdopen(fd, "rb") as handle:
                handle.seek(offset)
                length = os.fstat(handle.fileno()).st_size - offset
                return copy_stream(handle, sink.write, length if limit is None else min(length, limit))
        except OSError as exc:
            raise self._fail("read", rpath, exc) from exc

    def rename(self, src: str, dst: str) -> None:
        try:
            os.replace(src, dst)
        except OSError as exc:
            raise self._fail("rename", src, exc) from exc

    def remove(self, rpath: str) -> None:
        try:
            os.unlink(rpath)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise self._fail("remove", rpath, exc) from exc

    def set_mtime(self, rpath: str, mtime: float) -> None:
        try:
            os.utime(rpath, (mtime, mtime), follow_symlinks=False)
        except OSError as exc:
            raise self._fail("set the time of", rpath, exc) from exc

    def fork(self) -> "LocalTransport":
        """Local files need no connection: a fork is just another instance."""
        return LocalTransport()

    def __repr__(self) -> str:
        return "LocalTransport()"
