"""Where a recorder's file goes (``<results_dir>/<time-step>-<name>``) and how it is published.

Files are written to a temp name and then published: replacing an existing file when
``cover=True``, or created exclusively (``os.link``) when ``cover=False``, so an existing
result is never overwritten, even by a concurrent writer.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from pathlib import Path
from typing import Iterator, Optional, Union

from RLA.errors import RLAError

PathLike = Union[str, "os.PathLike[str]"]


def result_path(
    results_dir: Optional[PathLike],
    name: str,
    step: Optional[int],
    add_timestamp: bool = True,
    default_ext: str = "",
) -> Path:
    """``<results_dir>/<dirs>/<step>-<basename><ext>`` (no step prefix when ``add_timestamp`` is False).

    Raises:
        RLAError: no results directory (no run created yet) or an unsafe name.
    """
    if results_dir is None:
        raise RLAError(
            "No results directory to record into",
            expected="a run (exp_manager.log_files_gen()) or an explicit results_dir",
            found="results_dir=None",
            fix="call exp_manager.log_files_gen() first",
        )
    if not name or Path(name).is_absolute() or ".." in Path(name).parts:
        raise RLAError(
            "Bad result name",
            expected="a relative name such as 'curves' or 'eval/return.png'",
            found=repr(name),
            fix="use a name inside the results directory",
        )
    rel = Path(name)
    base = rel.name if rel.suffix else rel.name + default_ext
    if add_timestamp:
        base = f"{step}-{base}"
    return Path(results_dir) / rel.parent / base


@contextlib.contextmanager
def publish(path: Path, cover: bool) -> Iterator[Optional[Path]]:
    """Yield a temp path to write (``None`` when the file exists and ``cover`` is False).

    After the block the temp file becomes ``path``; on error it is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not cover:
        warnings.warn(f"{path} exists and cover=False: not overwritten", RuntimeWarning, stacklevel=4)
        yield None
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        if cover:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # exclusive: fails if someone created it meanwhile
            except FileExistsError:
                warnings.warn(
                    f"{path} appeared meanwhile and cover=False: not overwritten",
                    RuntimeWarning,
                    stacklevel=4,
                )
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
