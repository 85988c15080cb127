"""The ``Transport`` interface: file-level primitives a sync protocol must provide.

A transport talks to one remote file tree with POSIX paths (``rpath``). It implements
only primitives (stat, list, mkdir, write at an offset, read from an offset, rename,
remove); whole-run logic, retries and resumption live in :mod:`RLA.sync.syncer`.
Transports are context managers whose :meth:`Transport.close` is idempotent.
"""
from __future__ import annotations

import abc
import os
import posixpath
from dataclasses import dataclass
from typing import IO, Callable, Dict, Iterator, List, Optional, Set, Tuple

from RLA.errors import TransportError

#: Bytes read from a local file per write request.
CHUNK = 256 * 1024


@dataclass(frozen=True)
class RemoteStat:
    """Size and modification time (seconds) of a remote file."""

    size: int
    mtime: Optional[float] = None


@dataclass(frozen=True)
class WriteResult:
    """The outcome of :meth:`Transport.write`: bytes written and the file's size afterwards."""

    sent: int
    size: int


@dataclass(frozen=True)
class RemoteEntry:
    """One entry of a remote directory listing."""

    name: str
    is_dir: bool
    size: int = 0
    mtime: Optional[float] = None


class Transport(abc.ABC):
    """A connection to one remote file tree.

    Subclasses implement the abstract primitives; the base class adds counters,
    :meth:`makedirs` (cached per connection), :meth:`walk` and the context manager.

    Attributes:
        bytes_sent: payload bytes written to the remote so far.
        bytes_received: payload bytes read from the remote so far.
    """

    #: Registry name of the transport ("sftp", "ftp", "local").
    name: str = ""

    def __init__(self) -> None:
        self.bytes_sent = 0
        self.bytes_received = 0
        self._known_dirs: Set[str] = set()
        self._closed = False

    # ----------------------------------------------------------------- primitives
    @abc.abstractmethod
    def stat(self, rpath: str) -> Optional[RemoteStat]:
        """Size and mtime of the file ``rpath``, or ``None`` if it does not exist."""
        raise NotImplementedError("The 'stat' method must be implemented.")

    @abc.abstractmethod
    def listdir(self, rpath: str) -> List[RemoteEntry]:
        """The entries of directory ``rpath`` (empty if it does not exist)."""
        raise NotImplementedError("The 'listdir' method must be implemented.")

    @abc.abstractmethod
    def mkdir(self, rpath: str) -> None:
        """Create one directory level (its parent exists); an existing one is fine."""
        raise NotImplementedError("The 'mkdir' method must be implemented.")

    @abc.abstractmethod
    def write(self, rpath: str, source: IO[bytes], offset: int, length: int, mtime: Optional[float] = None,
              expect_size: Optional[int] = None) -> WriteResult:
        """Write ``length`` bytes read from ``source`` into ``rpath`` starting at ``offset``.

        ``offset == 0`` creates or truncates the file; a positive offset writes into the
        existing file. With ``expect_size``, nothing is written unless the file has exactly
        that size (the result then reports ``sent == 0`` and the size found). ``mtime`` is
        set on the file after the write. The result's ``size`` is read back from the server,
        so callers can verify the transfer.
        """
        raise NotImplementedError("The 'write' method must be implemented.")

    @abc.abstractmethod
    def read(self, rpath: str, sink: IO[bytes], offset: int) -> int:
        """Copy the bytes of ``rpath`` from ``offset`` to its end into ``sink``."""
        raise NotImplementedError("The 'read' method must be implemented.")

    @abc.abstractmethod
    def rename(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst``, replacing ``dst`` if it exists."""
        raise NotImplementedError("The 'rename' method must be implemented.")

    @abc.abstractmethod
    def remove(self, rpath: str) -> None:
        """Delete the file ``rpath`` (a missing file is fine)."""
        raise NotImplementedError("The 'remove' method must be implemented.")

    def set_mtime(self, rpath: str, mtime: float) -> None:
        """Set the modification time of ``rpath``; optional, the default does nothing."""

    def fork(self) -> Optional["Transport"]:
        """Another channel over the same connection, for parallel transfers; optional.

        The default (``None``) means the transport has one channel and is used serially.
        A fork counts its own bytes and is closed by the caller before the parent.
        """
        return None

    def _close(self) -> None:
        """Release the connection; called once by :meth:`close`."""

    # -------------------------------------------------------------- conveniences
    def put(self, lpath: "os.PathLike[str] | str", rpath: str, offset: int = 0,
            length: Optional[int] = None) -> int:
        """Upload the local file from ``offset`` (``length`` bytes, default: to its end)."""
        with open(lpath, "rb") as handle:
            if length is None:
                length = os.fstat(handle.fileno()).st_size - offset
            handle.seek(offset)
            return self.send(rpath, handle, offset, length).sent

    def send(self, rpath: str, source: IO[bytes], offset: int, length: int, mtime: Optional[float] = None,
             expect_size: Optional[int] = None) -> WriteResult:
        """:meth:`write` that counts the bytes into :attr:`bytes_sent`."""
        result = self.write(rpath, source, offset, length, mtime=mtime, expect_size=expect_size)
        self.bytes_sent += result.sent
        return result

    def get(self, rpath: str, sink: IO[bytes], offset: int = 0) -> int:
        """Download ``rpath`` from ``offset`` into the open binary ``sink``."""
        got = self.read(rpath, sink, offset)
        self.bytes_received += got
        return got

    def makedirs(self, rpath: str) -> None:
        """Create ``rpath`` and its missing parents (known directories are cached).

        The leaf is tried first, so a new run directory costs one request; parents are
        only visited when that fails.
        """
        rpath = posixpath.normpath(rpath)
        if rpath in self._known_dirs or rpath in ("/", "", "."):
            return
        try:
            self.mkdir(rpath)
        except TransportError:
            parent = posixpath.dirname(rpath)
            if parent == rpath:
                raise
            self.makedirs(parent)
            self.mkdir(rpath)
        self._known_dirs.add(rpath)

    def walk(self, rpath: str) -> Iterator[Tuple[str, RemoteEntry]]:
        """Yield ``(relative path, entry)`` for every file below ``rpath``."""
        stack: List[Tuple[str, str]] = [(rpath, "")]
        while stack:
            directory, prefix = stack.pop()
            for entry in sorted(self.listdir(directory), key=lambda e: e.name):
                rel = f"{prefix}{entry.name}"
                if entry.is_dir:
                    stack.append((posixpath.join(directory, entry.name), rel + "/"))
                else:
                    yield rel, entry

    def listing(self, rpath: str) -> Dict[str, RemoteEntry]:
        """:meth:`walk` as a dict."""
        return dict(self.walk(rpath))

    def close(self) -> None:
        """Close the connection; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Transport":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def copy_stream(source: IO[bytes], write: Callable[[bytes], object], length: int,
                chunk: int = CHUNK) -> int:
    """Copy exactly ``length`` bytes (fewer if ``source`` ends) from ``source`` to ``write``."""
    done = 0
    while done < length:
        data = source.read(min(chunk, length - done))
        if not data:
            break
        write(data)
        done += len(data)
    return done
