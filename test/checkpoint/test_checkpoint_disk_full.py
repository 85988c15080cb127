"""A full disk during a checkpoint save: a DiskFullError, the previous checkpoints intact, no temp.

On a real 8 MiB tmpfs (root only, else skipped) and with ENOSPC injected at chosen writes
of the file torch / numpy write into, and at the fsync.
"""
from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

from RLA.checkpoint import CheckpointSaver
from RLA.errors import DiskFullError, RLAError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from small_disk import fill, free_space  # noqa: E402


def small_state(step: int) -> dict:
    return {"w": np.full(256, step, dtype=np.float32), "step": step}


def big_state() -> dict:
    return {"w": np.arange(1 << 18, dtype=np.float64)}  # 2 MiB


def leftovers(directory: Path) -> List[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.timeout(120)
def test_full_tmpfs_save_is_a_clear_error_and_keeps_the_previous_checkpoints(small_disk: Path,
                                                                            backend: str) -> None:
    saver = CheckpointSaver(small_disk / "ckpt", backend=backend, max_to_keep=2)
    saver.save(1, small_state(1))
    saver.save(2, small_state(2))
    before = {p.name: p.read_bytes() for p in (small_disk / "ckpt").iterdir()}
    fill(small_disk, leave=64 * 1024)
    with pytest.raises(DiskFullError) as info:
        saver.save(3, big_state())
    exc = info.value
    assert isinstance(exc, RLAError) and isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    assert exc.path == str(saver.path_for(3)) and exc.path in str(exc)
    assert exc.free is not None and f"{exc.free} bytes free" in str(exc)
    assert {p.name: p.read_bytes() for p in (small_disk / "ckpt").iterdir()} == before  # rotation did not run
    assert leftovers(small_disk / "ckpt") == []
    step, state = saver.load()
    assert step == 2 and np.array_equal(state["w"], small_state(2)["w"])
    free_space(small_disk)
    saver.save(3, big_state())  # after freeing space the same save works and rotates
    assert saver.steps() == [2, 3] and np.array_equal(saver.load()[1]["w"], big_state()["w"])


class FailingFile:
    """A binary file whose ``write`` number ``fail_at`` (1-based) raises ENOSPC."""

    def __init__(self, handle: Any, fail_at: int) -> None:
        self._handle = handle
        self.fail_at = fail_at
        self.calls = 0

    def write(self, data: Any) -> int:
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._handle.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> "FailingFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def count_writes(tmp_path: Path, backend: str, monkeypatch) -> int:
    """How many writes a save of ``big_state()`` makes into its file."""
    files: List[FailingFile] = []
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: files.append(FailingFile(real_fdopen(*a, **k), 0))
                        or files[-1])
    CheckpointSaver(tmp_path / "count", backend=backend).save(1, big_state())
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    return files[0].calls


@pytest.mark.parametrize("where", ["first", "second", "middle", "last"])
def test_enospc_at_any_write_of_the_container_is_a_disk_full_error(tmp_path: Path, backend: str,
                                                                   monkeypatch, where: str) -> None:
    total = count_writes(tmp_path, backend, monkeypatch)
    fail_at = {"first": 1, "second": 2, "middle": max(total // 2, 1), "last": total}[where]
    saver = CheckpointSaver(tmp_path / "ckpt", backend=backend, max_to_keep=1)
    saver.save(1, small_state(1))
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: FailingFile(real_fdopen(*a, **k), fail_at))
    with pytest.raises(DiskFullError, match="checkpoint-2"):
        saver.save(2, big_state())
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert saver.steps() == [1] and leftovers(tmp_path / "ckpt") == []
    assert saver.load()[0] == 1


def test_enospc_at_the_fsync_is_a_disk_full_error(tmp_path: Path, backend: str, monkeypatch) -> None:
    saver = CheckpointSaver(tmp_path / "ckpt", backend=backend, max_to_keep=1)
    saver.save(1, small_state(1))

    def full_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_fsync)
    with pytest.raises(DiskFullError, match="checkpoint-2"):
        saver.save(2, small_state(2))
    monkeypatch.undo()
    assert saver.steps() == [1] and leftovers(tmp_path / "ckpt") == []
