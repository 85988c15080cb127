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
import stat
from dataclasses import dataclass
from typing import IO, Callable, Dict, Iterator, List, Optional, Protocol, Set, Tuple

from RLA.errors import TransportError
from RLA.safe_paths import is_plain_name

#: Bytes read from a local file per write request.
CHUNK = 256 * 1024
#: Directory levels :meth:`Transport.walk` descends at most (a server may list an endless tree).
MAX_WALK_DEPTH = 32
#: The permission bits a transfer carries (never setuid, setgid or sticky).
PERMISSION_BITS = 0o777


def is_special_mode(st_mode: Optional[int]) -> bool:
    """Whether a full ``st_mode`` is neither a regular file, a folder nor a link (``None``: unknown, no)."""
    if not st_mode:
        return False
    return not (stat.S_ISREG(st_mode) or stat.S_ISDIR(st_mode) or stat.S_ISLNK(st_mode))


class Source(Protocol):
    """What :meth:`Transport.write` reads bytes from: only ``read(n)`` is called.

    An open binary file is one; so is a reader that hashes what passes through it (push).
    """

    def read(self, size: int = -1, /) -> bytes:
        """Up to ``size`` bytes (all that is left for -1); ``b""`` at the end."""
        ...


class RemoteFileError(TransportError):
    """One remote file cannot be read (gone since it was listed, or refused): skip it, go on."""


@dataclass(frozen=True)
class RemoteStat:
    """Size, modification time (seconds), permission bits and link flag of a remote path.

    ``mode`` is ``None`` when the server does not say; ``is_link`` is true for a symbolic
    link (which sync never follows); ``is_special`` for a FIFO, socket or device (never
    opened: reading a FIFO blocks until someone writes to it).
    """

    size: int
    mtime: Optional[float] = None
    mode: Optional[int] = None
    is_link: bool = False
    is_special: bool = False


@dataclass(frozen=True)
class WriteResult:
    """The outcome of :meth:`Transport.write`: bytes written and the file's size afterwards."""

    sent: int
    size: int


@dataclass(frozen=True)
class RemoteEntry:
    """One entry of a remote directory listing (``is_special``: a FIFO, socket or device)."""

    name: str
    is_dir: bool
    size: int = 0
    mtime: Optional[float] = None
    mode: Optional[int] = None
    is_link: bool = False
    is_special: bool = False


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
    #: Files up to this many bytes are published by one atomic write (an object store's PUT):
    #: push writes them in place, without a temporary name and a rename. 0: never.
    atomic_write_limit: int = 0

    def __init__(self) -> None:
        self.bytes_sent = 0
        self.bytes_received = 0
        self._known_dirs: Set[str] = set()
        self._closed = False

    # ----------------------------------------------------------------- primitives
    @abc.abstractmethod
    def stat(self, rpath: str) -> Optional[RemoteStat]:
        """Size and mtime of the file ``rpath``, or ``None`` if it does not exist.

        A symbolic link is reported as itself (``is_link``), not as the file it points to.
        """
        raise NotImplementedError("The 'stat' method must be implemented.")

    @abc.abstractmethod
    def listdir(self, rpath: str) -> List[RemoteEntry]:
        """The entries of directory ``rpath`` (empty if it does not exist).

        Names are returned as the server sent them (callers check them); a symbolic link
        has ``is_link`` set and ``is_dir`` false.
        """
        raise NotImplementedError("The 'listdir' method must be implemented.")

    @abc.abstractmethod
    def mkdir(self, rpath: str) -> None:
        """Create one directory level (its parent exists); an existing one is fine."""
        raise NotImplementedError("The 'mkdir' method must be implemented.")

    @abc.abstractmethod
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
        """Write ``length`` bytes read from ``source`` into ``rpath`` starting at ``offset``.

        ``offset == 0`` creates or truncates the file; a positive offset writes into the
        existing file. With ``expect_size``, nothing is written unless the file has exactly
        that size (the result then reports ``sent == 0`` and the size found). ``mtime`` is
        set on the file after the write. With ``mode``, the file gets these permission bits
        (set before any byte is written where the protocol allows). A symbolic link at
        ``rpath`` is never written through where the protocol lets the client tell. The
        result's ``size`` is read back from the server, so callers can verify the transfer.
        """
        raise NotImplementedError("The 'write' method must be implemented.")

    @abc.abstractmethod
    def read(self, rpath: str, sink: IO[bytes], offset: int, limit: Optional[int] = None) -> int:
        """Copy the bytes of ``rpath`` from ``offset`` to its end into ``sink``.

        With ``limit``, at most ``limit`` bytes are copied, whatever size the server claims
        (the transfer is cut there).
        """
        raise NotImplementedError("The 'read' method must be implemented.")

    @abc.abstractmethod
    def rename(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst``, replacing ``dst`` if it exists."""
        raise NotImplementedError("The 'rename' method must be implemented.")

    @abc.abstractmethod
    def remove(self, rpath: str) -> None:
        """Delete the file ``rpath`` (a missing file is fine)."""
        raise NotImplementedError("The 'remove' method must be implemented.")

    def set_mtime(self, rpath: str, mtime: float) -> None:  # noqa: B027 - an optional hook
        """Set the modification time of ``rpath``; optional, the default does nothing."""

    def fork(self) -> Optional["Transport"]:
        """Another channel over the same connection, for parallel transfers; optional.

        The default (``None``) means the transport has one channel and is used serially.
        A fork counts its own bytes and is closed by the caller before the parent.
        """
        return None

    def lanes(self, count: int) -> List["Transport"]:
        """This transport and up to ``count - 1`` forks of it (fewer when it cannot fork).

        The caller closes the forks (every lane but the first) before this transport.
        """
        lanes: List[Transport] = [self]
        try:
            while len(lanes) < count:
                twin = self.fork()
                if twin is None:
                    break
                lanes.append(twin)
        except BaseException:
            for twin in lanes[1:]:  # a fork that failed half-way leaves no open channel
                twin.close()
            raise
        return lanes

    def _close(self) -> None:  # noqa: B027 - an optional hook
        """Release the connection; called once by :meth:`close`."""

    # -------------------------------------------------------------- conveniences
    def put(
        self, lpath: "os.PathLike[str] | str", rpath: str, offset: int = 0, length: Optional[int] = None
    ) -> int:
        """Upload the local file from ``offset`` (``length`` bytes, default: to its end)."""
        with open(lpath, "rb") as handle:
            if length is None:
                length = os.fstat(handle.fileno()).st_size - offset
            handle.seek(offset)
            return self.send(rpath, handle, offset, length).sent

    def send(
        self,
        rpath: str,
        source: Source,
        offset: int,
        length: int,
        mtime: Optional[float] = None,
        expect_size: Optional[int] = None,
        mode: Optional[int] = None,
    ) -> WriteResult:
        """:meth:`write` that counts the bytes into :attr:`bytes_sent`."""
        result = self.write(
            rpath,
            source,
            offset,
            length,
            mtime=mtime,
            expect_size=expect_size,
            mode=None if mode is None else mode & PERMISSION_BITS,
        )
        self.bytes_sent += result.sent
        return result

    def get(self, rpath: str, sink: IO[bytes], offset: int = 0, limit: Optional[int] = None) -> int:
        """Download ``rpath`` from ``offset`` (at most ``limit`` bytes) into the open binary ``sink``."""
        capped = _CappedSink(sink, limit)
        got = self.read(rpath, capped, offset, limit=limit)  # type: ignore[arg-type]  # duck-typed sink
        self.bytes_received += got
        return capped.written

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

    def walk(
        self, rpath: str, refuse: Optional[Callable[[str, str], None]] = None
    ) -> Iterator[Tuple[str, RemoteEntry]]:
        """Yield ``(relative path, entry)`` for every file and link below ``rpath``.

        Only plain names are followed (a server listing ``..``, ``a/b`` or a name with a
        control character cannot send the walk elsewhere), links are yielded, never
        entered, and the walk stops :data:`MAX_WALK_DEPTH` levels down. Each entry left out
        is reported to ``refuse(relative path, reason)``.
        """
        stack: List[Tuple[str, str, int]] = [(rpath, "", 0)]
        while stack:
            directory, prefix, depth = stack.pop()
            for entry in sorted(self.listdir(directory), key=lambda e: str(e.name)):
                rel = f"{prefix}{entry.name}"
                if not is_plain_name(entry.name):
                    if refuse is not None and entry.name not in (".", ".."):
                        refuse(rel, "its name is not a plain file name")
                elif entry.is_dir and not entry.is_link:
                    if depth + 1 >= MAX_WALK_DEPTH:
                        if refuse is not None:
                            refuse(rel, f"it is more than {MAX_WALK_DEPTH} folders deep")
                        continue
                    stack.append((posixpath.join(directory, entry.name), rel + "/", depth + 1))
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


class _CappedSink:
    """A sink that keeps at most ``limit`` bytes (a transport that overshoots cannot overfill it)."""

    def __init__(self, sink: IO[bytes], limit: Optional[int]) -> None:
        self.sink, self.limit, self.written = sink, limit, 0

    def write(self, data: bytes) -> int:
        if self.limit is not None:
            data = data[: max(0, self.limit - self.written)]
        if data:
            self.sink.write(data)
            self.written += len(data)
        return len(data)


def copy_stream(source: Source, write: Callable[[bytes], object], length: int, chunk: int = CHUNK) -> int:
    """Copy exactly ``length`` bytes (fewer if ``source`` ends) from ``source`` to ``write``."""
    done = 0
    while done < length:
        data = source.read(min(chunk, length - done))
        if not data:
            break
        write(data)
        done += len(data)
    return done
