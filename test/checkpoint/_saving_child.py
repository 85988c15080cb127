"""Child process for the SIGKILL test: save big checkpoints in a loop until killed."""
from __future__ import annotations

import sys

import torch

from RLA.checkpoint import CheckpointSaver

folder, backend, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
saver = CheckpointSaver(folder, backend=backend, max_to_keep=2)
step = (saver.latest_step() or 0) + 1
while True:
    saver.save(step, {"w": torch.full((size,), float(step)), "step": step})
    print(step, flush=True)
    step += 1
