"""Child process of the SIGKILL test: fill a buffer with one value, announce, then save."""
import sys
import time

import numpy as np

from RLA.replay_buffer import ReplayBuffer

store, value = sys.argv[1], int(sys.argv[2])
buf = ReplayBuffer(3000, {"obs": ((3, 32, 32), "uint8"), "v": ((), "int64")},
                   segment_bytes=256 << 10, seed=value)
buf.add({"obs": np.full((3000, 3, 32, 32), value % 256, np.uint8),
         "v": np.full(3000, value)})
print("ready", flush=True)
t0 = time.perf_counter()
buf.dumps(store, keep_last=2)
print(f"saved {time.perf_counter() - t0:.4f}", flush=True)
