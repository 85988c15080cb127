"""A real small disk for full-disk tests: an 8 MiB tmpfs mounted under tmp_path (needs root).

Import the fixture into a test module: ``from small_disk import small_disk  # noqa: F401``.
Without root, or where ``mount`` is refused (a container without CAP_SYS_ADMIN), the tests
that use it are skipped with the reason.
"""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

SIZE = "8m"
FILLER = "filler.bin"


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size: str = SIZE) -> Iterator[Path]:
    """Mount a fresh tmpfs of ``size`` on ``where`` (created) for the block; unmount after."""
    if os.geteuid() != 0:
        pytest.skip("a full-disk test mounts a small tmpfs, which needs root")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True, timeout=30).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An empty 8 MiB tmpfs, unique to the test, unmounted at teardown."""
    with mounted_tmpfs(tmp_path / "small_disk") as where:
        yield where


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill ``disk`` until ENOSPC, then free ``leave`` bytes again; returns the filler file."""
    filler = disk / FILLER
    chunk = b"\0" * (1 << 20)
    with open(filler, "ab", buffering=0) as handle:
        for _ in range(64):  # 64 MiB at most: the disk is 8 MiB
            try:
                handle.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
        for _ in range(4096):  # the last partial page
            try:
                handle.write(b"\0" * 512)
            except OSError:
                break
        if leave:
            handle.truncate(max(os.fstat(handle.fileno()).st_size - leave, 0))
    return filler


def free_space(disk: Path) -> None:
    """Remove the filler written by :func:`fill`."""
    with contextlib.suppress(FileNotFoundError):
        (disk / FILLER).unlink()
