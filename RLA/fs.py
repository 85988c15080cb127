"""Safe filesystem primitives: atomic replacement, exclusive creation and trash moves."""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Iterator, NoReturn, Optional, SupportsFloat, Union

from RLA.errors import DiskFullError

PathLike = Union[str, "os.PathLike[str]"]

TRASH_DIR = ".trash"


def fsync_dir(directory: PathLike) -> None:
    """Flush a directory entry so a rename inside it survives a power cut."""
    try:
        fd = os.open(os.fspath(directory), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: errno values that mean "no space left": a full file system or an exhausted quota.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def free_bytes(path: PathLike) -> Optional[int]:
    """Bytes free for unprivileged users on the file system holding ``path`` (or its nearest existing parent)."""
    where = Path(path)
    for candidate in (where, *where.parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return None


def _size_text(size: Optional[int]) -> str:
    if size is None:
        return "unknown free space"
    value, unit = float(size), "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    shown = f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit} ({size} bytes)"
    return f"{shown} free"


def disk_full_error(path: PathLike, exc: OSError) -> DiskFullError:
    """The :class:`DiskFullError` for ``exc`` (ENOSPC/EDQUOT) raised while writing ``path``."""
    free = free_bytes(path)
    quota = exc.errno == errno.EDQUOT
    return DiskFullError(
        f"{'The disk quota is exhausted' if quota else 'The disk is full'}: could not write {os.fspath(path)}",
        expected="free space on the file system that holds it",
        found=f"{errno.errorcode.get(exc.errno or 0, exc.errno)} ({exc.strerror or exc}), {_size_text(free)}",
        fix="free space on that disk (or raise the quota), or move the data root to a larger disk "
        "(DATA_ROOT in rla_config.yaml / configure(data_root=...)), then retry",
        path=os.fspath(path),
        free=free,
        errno=exc.errno,
    )


def as_disk_full(exc: BaseException, path: PathLike) -> BaseException:
    """``exc`` as a :class:`DiskFullError` naming ``path`` if it is an ENOSPC/EDQUOT ``OSError``, else ``exc``.

    Call it where the write failed, before cleaning up, so the free space it reports is
    the space the write found.
    """
    if isinstance(exc, OSError) and not isinstance(exc, DiskFullError) and exc.errno in DISK_FULL_ERRNOS:
        return disk_full_error(path, exc)
    return exc


@contextlib.contextmanager
def disk_full_as_error(path: PathLike) -> Iterator[None]:
    """Turn an ``OSError`` ENOSPC/EDQUOT raised in the block into a :class:`DiskFullError` naming ``path``.

    Other errors (and a ``DiskFullError`` raised inside) pass through unchanged.
    """
    try:
        yield
    except OSError as exc:
        error = as_disk_full(exc, path)
        if error is exc:
            raise
        raise error from exc


def _umask() -> int:
    """The process umask (read without changing it for long)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Read once at import: os.umask can only be read by setting it, which is not thread-safe.
_UMASK = _umask()
#: Suffix of the temp files of atomic writes (``.<name>.<random>.tmp``).
TEMP_SUFFIX = ".tmp"
# The temp name repeats at most this much of the destination name, so that a temp file
# of a name that already uses the whole 255-byte budget still fits.
_TEMP_NAME_CHARS = 80


def temp_prefix(path: PathLike) -> str:
    """The prefix of the temp files an atomic write of ``path`` creates."""
    return f".{Path(path).name[:_TEMP_NAME_CHARS]}."


@contextlib.contextmanager
def atomic_file(path: PathLike, durable: bool = True) -> Iterator[IO[bytes]]:
    """Yield a binary handle on a temp file that replaces ``path`` only if the block succeeds.

    Readers see the old or the new file, never a mix; on any error the temp file is removed.
    The result gets the usual permissions (0666 & ~umask), not mkstemp's 0600. A full disk
    (ENOSPC/EDQUOT) is a :class:`RLA.errors.DiskFullError` naming ``path``.

    Args:
        path: destination file.
        durable: fsync the file and its directory (survives power loss; slower).
    """
    path = Path(path)
    with disk_full_as_error(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_UMASK)
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        _discard_and_raise(exc, tmp, path)
    if durable:
        fsync_dir(path.parent)


def write_temp_beside(path: PathLike, data: bytes, durable: bool = True) -> str:
    """Write ``data`` to a new temp file next to ``path``, to be renamed over it later.

    The two halves of :func:`atomic_write_bytes` for writers that must prepare several
    files before publishing any: this one needs the disk space (and fsyncs the temp when
    ``durable``), :func:`replace_with_temp` needs none. On any error the temp is removed.

    Returns:
        The temp file's path.

    Raises:
        DiskFullError: no space left for the temp (nothing is left behind).
    """
    path = Path(path)
    with disk_full_as_error(path):
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_UMASK)
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
    except BaseException as exc:
        _discard_and_raise(exc, tmp, path)
    return tmp


def replace_with_temp(tmp: PathLike, path: PathLike, durable: bool = True) -> None:
    """Rename the temp of :func:`write_temp_beside` over ``path`` (and fsync the folder when ``durable``)."""
    os.replace(tmp, path)
    if durable:
        fsync_dir(Path(path).parent)


def _discard_and_raise(exc: BaseException, tmp: str, path: PathLike) -> NoReturn:
    """Remove the temp of a failed atomic write and raise ``exc`` (a full disk as :class:`DiskFullError`)."""
    error = as_disk_full(exc, path)  # measured before the temp frees its space
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    if error is exc:
        raise exc
    raise error from exc


def remove_stale_temps(path: PathLike) -> int:
    """Delete temp files that atomic writes of ``path`` left behind when killed; returns the count."""
    path = Path(path)
    pattern = os.path.join(glob.escape(str(path.parent)), glob.escape(temp_prefix(path)) + "*" + TEMP_SUFFIX)
    removed = 0
    for stale in glob.glob(pattern):
        with contextlib.suppress(OSError):
            os.unlink(stale)
            removed += 1
    return removed


def atomic_write_bytes(path: PathLike, data: bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (see :func:`atomic_file`)."""
    with atomic_file(path, durable=durable) as handle:
        handle.write(data)


def atomic_write_text(path: PathLike, text: str, durable: bool = True) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


#: Types :func:`plain` returns unchanged (checked by exact type: ``np.float64`` is a float subclass).
_PLAIN_TYPES = (bool, int, float, str, type(None))


def plain(value: Any) -> Any:
    """``value`` as a plain Python number when it is a numpy/torch scalar, a 0-d or one-element
    array or tensor, or another real number (``Decimal``, ``Fraction``); anything else unchanged.

    Every number RLA writes to a CSV or JSON file goes through here, so a file never holds
    ``np.float64(0.34)``, ``tensor(2.5)`` or ``[2.5]`` where a reader expects ``0.34``.
    """
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if kind.__module__.partition(".")[0] in ("numpy", "torch") and hasattr(value, "item"):
        try:
            return value.item()
        except (ValueError, RuntimeError, TypeError):  # several elements: stays an array
            return value
    import numbers

    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) or (
        isinstance(value, numbers.Number)
        and not isinstance(value, numbers.Complex)
        and isinstance(value, SupportsFloat)
    ):  # Decimal
        return float(value)
    return value


def json_default(obj: Any) -> Any:
    """Make numpy/torch scalars and arrays, other real numbers (:func:`plain`), paths, sets and
    dates JSON-able; anything else becomes its repr."""
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy arrays/scalars, torch tensors
        try:
            return obj.tolist()
        except Exception:  # noqa: BLE001 - fall through to repr
            pass
    number = plain(obj)
    if number is not obj:
        return number
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    import datetime

    if isinstance(obj, (datetime.date, datetime.time)):
        return obj.isoformat()
    return repr(obj)


def atomic_write_json(path: PathLike, obj: Any, durable: bool = True) -> None:
    """Serialise ``obj`` as indented JSON and replace ``path`` atomically."""
    text = json.dumps(obj, indent=2, sort_keys=False, default=json_default, allow_nan=True)
    atomic_write_text(path, text + "\n", durable=durable)


def read_json(path: PathLike) -> Any:
    """Read a JSON file (UTF-8)."""
    with open(path, "r", encoding="utf-8") as handle:
        return json.load(handle)


def move_to_trash(path: PathLike, data_root: PathLike) -> Path:
    """Move ``path`` (inside ``data_root``) into ``<data_root>/.trash/<timestamp>/<relative path>``.

    Returns:
        The new location.

    Raises:
        ValueError: if ``path`` is not inside ``data_root`` (nothing is moved); an
            :class:`RLA.errors.UnsafePathError` (a ValueError) if ``.trash`` is a link.
    """
    from RLA.safe_paths import no_symlink_between

    path = Path(path).resolve()
    root = Path(data_root).resolve()
    rel = path.relative_to(root)  # raises ValueError outside the root
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    target = root / TRASH_DIR / stamp / rel
    no_symlink_between(root, target)  # a linked .trash could lead outside the data root
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(os.fspath(path), os.fspath(target))
    return target


def silence_stdout() -> None:
    """Point stdout at /dev/null (after a ``BrokenPipeError``: ``rla ... | head`` closed the
    pipe), so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
