"""Child of the publish fault-point tests: save a buffer filled with one value, or load the
store and print the value it holds ('load'). The parent sets RLA_FAULT to kill a save at a
fault point (RLA/replay_buffer/snapshot/faults.py).

    python publish_child.py save <store> <value> [snapshot_id]
    python publish_child.py load <store>
"""
import sys

import numpy as np

from RLA.replay_buffer import ReplayBuffer

SCHEMA = {"obs": ((64,), "uint8"), "v": ((), "int64")}


def main() -> None:
    action, store = sys.argv[1], sys.argv[2]
    buf = ReplayBuffer(2000, SCHEMA, segment_bytes=16 << 10, seed=0)
    if action == "save":
        value = int(sys.argv[3])
        buf.add({"obs": np.full((2000, 64), value, np.uint8), "v": np.full(2000, value)})
        snap_id = sys.argv[4] if len(sys.argv) > 4 else None
        buf.dumps(store, keep_last=2, snapshot_id=snap_id, overwrite=snap_id is not None)
        print("saved", flush=True)
        return
    buf.loads(store)
    values = np.unique(buf.storage.arrays["v"][:len(buf)])
    pixels = np.unique(buf.storage.arrays["obs"][:len(buf)])
    print(f"{len(buf)} {values.tolist()} {pixels.tolist()}", flush=True)


main()
