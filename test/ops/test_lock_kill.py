"""The data root's lock is held while its holder lives and released by the kernel when the
holder is SIGKILLed (flock): the next operation proceeds, no stale lock to clear by hand."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from RLA.ops import plan_archive, testing
from RLA.ops.lock import OperationBusyError, OpsLock


def _holder(root: Path, ready: Path) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            OpsLock(root).acquire()
            ready.write_text("held")
            time.sleep(60)
        finally:
            os._exit(0)
    return pid


@pytest.mark.timeout(60)
def test_a_lock_holder_killed_by_sigkill_releases_the_lock(tmp_path):
    root = tmp_path / "data"
    testing.make_database(root, runs=2, files=1, size=16)
    ready = tmp_path / "ready"
    pid = _holder(root, ready)
    try:
        for _ in range(1000):
            if ready.exists():
                break
            time.sleep(0.01)
        assert ready.exists(), "the child never took the lock"
        with pytest.raises(OperationBusyError, match=f"held by pid {pid}"):
            OpsLock(root, timeout=0.2).acquire()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    with OpsLock(root, timeout=5):
        pass
    assert [r.result for r in plan_archive(root, testing._runs(root)).apply()] == ["done", "done"]
