"""A small database of complete runs, copied fresh for every trial (see RLA.ops.testing).

Every test of this folder runs in RAM (``/dev/shm`` when it is a tmpfs, see
:func:`RLA.ops.testing.memory_dir`; ``tmp_path`` is overridden below): a SIGKILL's outcome
does not depend on fsync, which is most of an operation's time on a busy disk. The fsyncs
a power cut needs are checked by their order (test_durable_order.py), which a tmpfs keeps.
"""
from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from RLA.ops import testing

#: Tiny runs: every data type, one 512-byte file in each folder (the moves are the same).
FILES, SIZE = 1, 512


@contextmanager
def _memory_tmp(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    base = testing.memory_dir(tmp_path_factory.getbasetemp())
    folder = Path(tempfile.mkdtemp(prefix=f"rla-ops-{name}-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """4 runs of task 'demo', every data type, one small file in each folder; the commands
    are imported once so forked children spend their time on the operation."""
    with _memory_tmp(tmp_path_factory, "template") as root:
        testing.make_database(root, runs=testing.DEFAULT_RUNS, files=FILES, size=SIZE)
        testing.warm_up(root)
        yield root


@pytest.fixture
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A scratch folder in RAM for the trials' fresh copies (removed after the test)."""
    with _memory_tmp(tmp_path_factory, "work") as folder:
        yield folder


@pytest.fixture
def tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pytest's ``tmp_path``, in RAM (removed after the test)."""
    with _memory_tmp(tmp_path_factory, "test") as folder:
        yield folder
