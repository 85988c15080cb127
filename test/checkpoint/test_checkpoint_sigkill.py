"""A SIGKILL at any moment of a save never leaves a checkpoint that loads wrong."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from RLA.checkpoint import CheckpointSaver

CHILD = Path(__file__).with_name("_saving_child.py")


def _wait_for_first_save(proc: subprocess.Popen, deadline: float) -> int:
    line = proc.stdout.readline()
    assert line, "the child exited before saving"
    assert time.monotonic() < deadline
    return int(line)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("backend", ["torch", "numpy"])
def test_sigkill_mid_save_leaves_only_complete_checkpoints(tmp_path, backend, subprocess_env):
    rng = random.Random(1234)
    size = 1_000_000  # 4 MB per checkpoint: a save takes long enough to be interrupted
    for _round in range(4):
        proc = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path), backend, str(size)],
                                stdout=subprocess.PIPE, text=True, env=subprocess_env)
        try:
            _wait_for_first_save(proc, time.monotonic() + 60)
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            proc.stdout.close()
        saver = CheckpointSaver(tmp_path, backend=backend)
        step, state = saver.load()
        assert step == max(saver.steps()) == state["step"]
        assert torch.equal(state["w"], torch.full((size,), float(step)))
        for older in saver.steps():  # every visible file is complete, not only the newest
            assert saver.load(older)[1]["step"] == older
