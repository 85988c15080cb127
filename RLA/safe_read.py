"""Read files RLA did not write itself (a pulled run, a config): regular files only, bounded.

A file of a run can arrive by ``rla sync pull`` from a machine nobody checked, so nothing
in it is trusted: every read here

* opens with ``O_NOFOLLOW | O_NONBLOCK`` and checks the *opened* descriptor with ``fstat``
  (no race between a check and the open): a symbolic link, a FIFO, a socket, a device or a
  directory is refused, never opened for reading, so nothing can block or read
  ``/etc/passwd`` through a link;
* reads at most ``max_bytes`` (a file growing past the cap while read is refused too);
* for JSON, refuses nesting deeper than ``max_depth`` before parsing (so neither the parser
  nor any later recursive walk can hit Python's recursion limit) and turns every parser
  failure (bad syntax, a 5,000-digit integer, invalid UTF-8) into :class:`UnreadableFileError`.

Callers catch :class:`UnreadableFileError` and report the file's reason (a damaged run is
skipped and reported, a damaged config is a ``ConfigError``).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from contextlib import contextmanager
from typing import Any, Iterator, Tuple, Union

from RLA.errors import RLAError

PathLike = Union[str, "os.PathLike[str]"]
#: Default cap of a JSON file of a run (run.json, parameter.json, archive_tester).
MAX_JSON_BYTES = 16 << 20
#: Default nesting limit of a JSON document (RLA writes at most a handful of levels).
MAX_JSON_DEPTH = 64
#: Default cap of a ``progress.csv`` (a long run with many columns stays far below it).
MAX_CSV_BYTES = 2 << 30
_CHUNK = 1 << 20
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)
# A string token's closing quote is optional: a string that never ends is consumed once, to
# the end of the text (a mandatory quote made the regex retry from every escaped quote: quadratic).
# The JSON parser reads the same string from the same quote, so no bracket it sees is skipped.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
#: A ``\uD800``-``\uDFFF`` escape: the only way JSON text can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb'\\u[dD][89a-fA-F]')


class UnreadableFileError(RLAError, ValueError):
    """A file is not a regular file, too big, too deeply nested or not parseable.

    Attributes:
        reason: the short reason shown when the run is skipped (``not a regular file (a FIFO)``).
    """

    def __init__(self, path: PathLike, reason: str, fix: str = "repair or remove the file") -> None:
        super().__init__(
            f"Cannot read {os.fspath(path)}: {reason}",
            expected="a regular file of sane size and content",
            found=reason,
            fix=fix,
        )
        self.reason = reason


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def kind_of(path: PathLike) -> str:
    """What is at ``path`` (``a FIFO``, ``a directory`` ..., ``a regular file``, ``nothing``), by ``stat``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "nothing"
    return "a regular file" if stat.S_ISREG(mode) else _kind(mode)


def _open_error(path: PathLike, exc: OSError) -> UnreadableFileError:
    if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and os.path.islink(path)):
        return UnreadableFileError(path, "a symbolic link (links are not followed)")
    if exc.errno == errno.EISDIR:
        return UnreadableFileError(path, "not a regular file (a directory)")
    return UnreadableFileError(path, f"cannot open ({exc.strerror or exc})")


@contextmanager
def open_regular(path: PathLike) -> Iterator[Tuple[int, os.stat_result]]:
    """Open ``path`` for reading only if it is a regular file: ``(fd, fstat)``; closed on exit.

    Raises:
        UnreadableFileError: a link, a directory, a FIFO, a socket, a device, or no access.
        FileNotFoundError: the file does not exist (callers decide whether that is a problem).
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        info = os.fstat(fd)  # the opened file itself: no race with a swap after a check
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFileError(path, f"not a regular file ({_kind(info.st_mode)})")
        yield fd, info
    finally:
        os.close(fd)


def _read_up_to(path: PathLike, fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    try:
        while total < limit:
            chunk = os.read(fd, min(_CHUNK, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise UnreadableFileError(path, f"read error ({exc.strerror or exc})") from None
    return b"".join(chunks)


def read_bytes(path: PathLike, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``).

    Raises:
        UnreadableFileError: a link, a non-regular file, a file above the cap, an I/O error.
        FileNotFoundError: the file does not exist.
    """
    with open_regular(path) as (fd, info):
        if info.st_size > max_bytes:
            raise UnreadableFileError(path, f"{info.st_size} bytes (at most {max_bytes} are read)")
        data = _read_up_to(path, fd, max_bytes + 1)
    if len(data) > max_bytes:
        raise UnreadableFileError(path, f"more than {max_bytes} bytes (it grew while read)")
    return data


def read_prefix(path: PathLike, max_bytes: int) -> bytes:
    """The first ``max_bytes`` bytes of the regular file ``path`` (e.g. to read a header).

    Raises:
        UnreadableFileError: a link, a non-regular file, an I/O error.
        FileNotFoundError: the file does not exist.
    """
    with open_regular(path) as (fd, _):
        return _read_up_to(path, fd, max_bytes)


def read_text(path: PathLike, max_bytes: int) -> str:
    """:func:`read_bytes` decoded as UTF-8 text; NUL bytes or invalid UTF-8 mean "binary".

    Raises:
        UnreadableFileError: as :func:`read_bytes`, or the file is binary.
    """
    data = read_bytes(path, max_bytes)
    return decode_text(path, data)


def decode_text(path: PathLike, data: bytes) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped).

    Raises:
        UnreadableFileError: NUL bytes or invalid UTF-8 (a binary file).
    """
    if b"\x00" in data:
        raise UnreadableFileError(path, f"a binary file (NUL byte at offset {data.index(0)})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(path, f"a binary file (invalid UTF-8 at offset {exc.start})") from None


def nesting_depth(data: bytes, limit: int) -> int:
    """The bracket nesting depth of a JSON text, counting at most to ``limit + 1``.

    Brackets inside strings do not count. The common case (fewer brackets than the limit in
    the whole text) costs one ``bytes.count``.
    """
    if data.count(b"[") + data.count(b"{") <= limit:
        return min(data.count(b"[") + data.count(b"{"), limit)
    depth = deepest = 0
    for match in _TOKENS.finditer(data):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def parse_json(path: PathLike, data: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON bytes read from ``path`` with a nesting limit.

    Raises:
        UnreadableFileError: nested deeper than ``max_depth``, binary, not valid JSON, or a string
            holding a lone surrogate (``"\\ud800"``: valid JSON, but no UTF-8 text).
    """
    if nesting_depth(data, max_depth) > max_depth:
        raise UnreadableFileError(path, f"JSON nested more than {max_depth} levels deep")
    text = decode_text(path, data)
    try:
        value = json.loads(text)
    except RecursionError:  # cannot happen below the depth limit; kept as a last guard
        raise UnreadableFileError(path, "JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and int() of more than 4300 digits
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise UnreadableFileError(path, f"not valid JSON ({first})") from None
    if _SURROGATE_ESCAPE.search(data) is not None:
        _refuse_lone_surrogates(path, value)
    return value


def _refuse_lone_surrogates(path: PathLike, value: Any) -> None:
    """Raise when a string (key or value) of the parsed ``value`` is not encodable as UTF-8.

    ``"\\ud800"`` is valid JSON, yet the string it gives cannot be written as UTF-8: pandas,
    pyarrow and SQLite fail on it far from here, for every run listed with it.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise UnreadableFileError(
                    path, f"a lone surrogate ({item[exc.start]!r}) in a string: not UTF-8 text"
                ) from None


def read_json(path: PathLike, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Read and parse the JSON file ``path`` (regular file, size cap, depth limit).

    Raises:
        UnreadableFileError: see :func:`read_bytes` and :func:`parse_json`.
        FileNotFoundError: the file does not exist.
    """
    return parse_json(path, read_bytes(path, max_bytes), max_depth)


def read_json_object(
    path: PathLike, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH
) -> dict:
    """:func:`read_json` of a file that must hold a JSON object.

    Raises:
        UnreadableFileError: as :func:`read_json`, or the document is not an object.
    """
    data = read_json(path, max_bytes, max_depth)
    if not isinstance(data, dict):
        raise UnreadableFileError(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def is_present(path: PathLike) -> bool:
    """Whether anything (a file, a link, a FIFO, a directory) exists at ``path`` (``lstat``)."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True
