"""``LocalTransport``: a folder acting as the main node (NFS mounts, tests)."""
from __future__ import annotations

import os
from typing import IO, List, Optional

from RLA.errors import TransportError
from RLA.sync.base import RemoteEntry, RemoteStat, Transport, WriteResult, copy_stream

class LocalTransport(Transport):
    """Read and write a remote tree that is a local (or mounted) folder.

    Remote paths are used as local paths, so ``remote_data_root`` is the folder itself.
    """

    name = "local"

    def __init__(self, **_ignored: object) -> None:
        super().__init__()

    @staticmethod
    def _fail(action: str, rpath: str, exc: OSError) -> TransportError:
        return TransportError(f"Local transport could not {action} {rpath}",
                              expected="a writable folder", found=f"{type(exc).__name__}: {exc.strerror or exc}",
                              fix="check that the folder is mounted and writable")

    def stat(self, rpath: str) -> Optional[RemoteStat]:
        try:
            st = os.stat(rpath)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail("stat", rpath, exc) from exc
        return RemoteStat(st.st_size, st.st_mtime)

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        try:
            with os.scandir(rpath) as it:
                out = []
                for entry in it:
                    st = entry.stat()
                    out.append(RemoteEntry(entry.name, entry.is_dir(), st.st_size, st.st_mtime))
                return out
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._fail("list", rpath, exc) from exc

    def mkdir(self, rpath: str) -> None:
        try:
            os.mkdir(rpath)
        except FileExistsError:
            if not os.path.isdir(rpath):
                raise TransportError(f"Cannot create directory {rpath}", expected="a directory or nothing",
                                     found="a file", fix="remove the file on the main node") from None
        except OSError as exc:
            raise self._fail("create directory", rpath, exc) from exc

    def write(self, rpath: str, source: IO[bytes], offset: int, length: int, mtime: Optional[float] = None,
              expect_size: Optional[int] = None) -> WriteResult:
        try:
            with open(rpath, "wb" if offset == 0 and expect_size is None else "r+b") as handle:
                found = os.fstat(handle.fileno()).st_size
                if expect_size is not None and found != expect_size:
                    return WriteResult(0, found)
                handle.seek(offset)
                sent = copy_stream(source, handle.write, length)
                handle.flush()
                size = os.fstat(handle.fileno()).st_size
            if mtime is not None:
                os.utime(rpath, (mtime, mtime))
            return WriteResult(sent, size)
        except FileNotFoundError:
            if expect_size is not None:
                return WriteResult(0, -1)
            raise
        except OSError as exc:
            raise self._fail("write", rpath, exc) from exc

    def read(self, rpath: str, sink: IO[bytes], offset: int) -> int:
        try:
            with open(rpath, "rb") as handle:
                handle.seek(offset)
                return copy_stream(handle, sink.write, os.fstat(handle.fileno()).st_size - offset)
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
            os.utime(rpath, (mtime, mtime))
        except OSError as exc:
            raise self._fail("set the time of", rpath, exc) from exc

    def fork(self) -> "LocalTransport":
        """Local files need no connection: a fork is just another instance."""
        return LocalTransport()

    def __repr__(self) -> str:
        return "LocalTransport()"
