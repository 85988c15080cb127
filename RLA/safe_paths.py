"""Checks that a name or path from outside (a user, a peer, a run's files) stays inside the data root.

Every place that builds a local path from text it did not make itself (a name a sync server
lists, a ``--task`` argument, a file name in a manifest) checks the text here first, then
checks the final path with :func:`inside`. A name is *plain* when it is one path component:
not empty, not ``.`` or ``..``, no ``/`` or ``\\``, no NUL, newline or other control
character (C0, DEL or C1), at most 255 bytes in UTF-8.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Tuple, Union

from RLA.errors import UnsafePathError

MAX_COMPONENT_BYTES = 255

__all__ = [
    "UnsafePathError",
    "is_plain_name",
    "check_name",
    "check_relative",
    "inside",
    "no_symlink_between",
    "safe_join",
    "makedirs_inside",
    "open_dir_inside",
]

#: ``os.open`` flag: never follow a link at the path itself (POSIX; 0 where it is missing).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: ``os.open`` flag: never block on a FIFO or device (0 where it is missing).
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: A folder opened as a handle for ``*at`` calls, never through a link at any component.
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _problem(text: str) -> str | None:
    """Why ``text`` is not a plain path component, or None when it is."""
    if text == "":
        return "it is empty"
    if text in (".", ".."):
        return f"it is {text!r}"
    if "/" in text or "\\" in text:
        return "it contains a path separator"
    for char in text:
        if ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F:  # C0, DEL and C1 (U+009B is a one-byte CSI)
            return f"it contains the control character {char!r}"
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8"
    if len(encoded) > MAX_COMPONENT_BYTES:
        return f"it is {len(encoded)} bytes long (at most {MAX_COMPONENT_BYTES})"
    return None


def is_plain_name(text: object) -> bool:
    """Whether ``text`` is a str that is one plain path component."""
    return isinstance(text, str) and _problem(text) is None


def check_name(text: object, what: str = "name") -> str:
    """Return ``text`` when it is one plain path component, else raise :class:`UnsafePathError`."""
    if not isinstance(text, str):
        raise UnsafePathError(
            f"The {what} is not a string", expected="a plain name", found=f"{type(text).__name__} {text!r}"
        )
    problem = _problem(text)
    if problem is not None:
        raise UnsafePathError(
            f"The {what} {text!r} is refused: {problem}",
            expected="a plain name: no '..', no '/', no control characters",
            fix=f"pass a {what} made of one path component",
        )
    return text


def check_relative(text: object, what: str = "path") -> Tuple[str, ...]:
    """Split a relative ``a/b/c`` path into its components, each checked with :func:`check_name`.

    Refuses an absolute path, an empty component (``a//b``, a trailing ``/``), ``.`` and ``..``.
    """
    if not isinstance(text, str):
        raise UnsafePathError(
            f"The {what} is not a string", expected="a relative path", found=f"{type(text).__name__} {text!r}"
        )
    if text.startswith("/") or text.startswith("\\") or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(
            f"The {what} {text!r} is refused: it is an absolute path",
            expected="a path relative to the data root",
            fix=f"pass the {what} relative to the data root, without a leading '/'",
        )
    parts = tuple(text.split("/"))
    for part in parts:
        problem = _problem(part)
        if problem is not None:
            raise UnsafePathError(
                f"The {what} {text!r} is refused: the component {part!r}: {problem}",
                expected="components without '..', '.', empty parts or control characters",
                fix=f"pass a plain relative {what}",
            )
    return parts


def inside(root: Union[str, os.PathLike], path: Union[str, os.PathLike]) -> Path:
    """Return ``path`` when it resolves inside ``root`` (symlinks resolved), else raise."""
    root_resolved = Path(root).resolve()
    resolved = Path(path).resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise UnsafePathError(
            f"The path {str(path)!r} is outside the data root",
            expected=f"a path inside {str(root_resolved)!r}",
            found=f"it resolves to {str(resolved)!r}",
            fix="check the names involved: RLA never writes outside the data root",
        )
    return Path(path)


def no_symlink_between(root: Union[str, os.PathLike], path: Union[str, os.PathLike]) -> Path:
    """Return ``path`` when no existing component from ``root`` (excluded) to ``path`` is a symlink.

    ``path`` must be ``root`` joined with relative components. Components that do not exist yet
    are fine (the caller creates them as plain directories).
    """
    root = Path(root)
    rel = Path(path).relative_to(root)
    current = root
    for part in rel.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            break
        if stat.S_ISLNK(mode):
            raise _link_refused(current, os.readlink(current))
    return Path(path)


def _link_refused(path: Union[str, os.PathLike], target: str) -> UnsafePathError:
    return UnsafePathError(
        f"The path {str(path)!r} is a symbolic link",
        expected="plain directories and files inside the data root",
        found=f"a link to {target!r}",
        fix="replace the link by a real folder; RLA does not follow links in the data root",
    )


def safe_join(root: Union[str, os.PathLike], relative: str, what: str = "path") -> Path:
    """``root / relative`` after checking every component and that no link is on the way."""
    parts = check_relative(relative, what)
    path = Path(root).joinpath(*parts)
    no_symlink_between(root, path)
    return inside(root, path)


def makedirs_inside(root: Union[str, os.PathLike], path: Union[str, os.PathLike], mode: int = 0o777) -> Path:
    """Create the missing folders from ``root`` (excluded) down to ``path``, never through a link.

    Each component must be a plain name; an existing one must be a real folder (a symlink or
    a file on the way raises :class:`UnsafePathError`), and ``path`` must resolve inside
    ``root``. ``root`` itself is trusted and created when missing. Returns ``path``.
    """
    os.close(open_dir_inside(root, path, mode))
    return inside(root, path)


def open_dir_inside(root: Union[str, os.PathLike], path: Union[str, os.PathLike], mode: int = 0o777) -> int:
    """A descriptor of the folder ``path`` below ``root``, each component opened from the last.

    The folders are created when missing and opened one by one with ``O_NOFOLLOW`` relative
    to the previous descriptor (``openat``), so the descriptor is the folder inside ``root``
    even if a folder on the way is replaced by a link later: files created with
    ``dir_fd=`` this descriptor cannot land elsewhere (a path checked first, then used,
    could). ``root`` itself is trusted (it may be a link) and created when missing. The
    caller closes the descriptor.

    Raises:
        UnsafePathError: a component is not a plain name, or is a link or a file.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, _DIR_FLAGS & ~NOFOLLOW)
    current = root
    try:
        for part in Path(path).relative_to(root).parts:
            current = current / check_name(part, "folder name")
            try:
                os.mkdir(part, mode, dir_fd=fd)
            except FileExistsError:
                pass
            child = _open_child_dir(fd, part, current)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_dir(parent_fd: int, part: str, shown: Path) -> int:
    """``openat(parent_fd, part)`` of a real folder; a link or a file is an :class:`UnsafePathError`."""
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
    if stat.S_ISLNK(os.lstat(part, dir_fd=parent_fd).st_mode):
        raise _link_refused(shown, os.readlink(part, dir_fd=parent_fd))
    raise UnsafePathError(
        f"The path {str(shown)!r} is not a folder",
        expected="a folder or nothing",
        found="a file",
        fix="move the file away; RLA creates the folder",
    )
