"""Safe filesystem primitives: atomic replacement, exclusive creation and trash moves."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Union

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


def _umask() -> int:
    """The process umask (read without changing it for long)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Read once at import: os.umask can only be read by setting it, which is not thread-safe.
_UMASK = _umask()


def atomic_write_bytes(path: PathLike, data: bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    Args:
        path: destination file.
        data: the whole new content.
        durable: fsync the file and its directory (slower, survives power loss).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A short temp name: the destination may already use the whole 255-byte budget.
    fd, tmp = tempfile.mkstemp(prefix=".rla-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        # mkstemp creates 0600 files: give the result the usual permissions (0666 & ~umask).
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: PathLike, text: str, durable: bool = True) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def json_default(obj: Any) -> Any:
    """Make numpy/torch scalars, arrays, paths and sets JSON-able; anything else becomes its repr."""
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy arrays/scalars, torch tensors
        try:
            return obj.tolist()
        except Exception:  # noqa: BLE001 - fall through to repr
            pass
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
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
        ValueError: if ``path`` is not inside ``data_root`` (nothing is moved).
    """
    path = Path(path).resolve()
    root = Path(data_root).resolve()
    rel = path.relative_to(root)  # raises ValueError outside the root
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    target = root / TRASH_DIR / stamp / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(os.fspath(path), os.fspath(target))
    return target
