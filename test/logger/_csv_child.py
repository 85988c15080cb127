"""Child process of the SIGKILL test: appends rows to progress.csv and acknowledges each.

Usage: python _csv_child.py LOG_DIR STOP_AT_ID SEED

Rows have ``id`` and keys ``x0..x{m-1}`` with ``m = keys_for(id)`` (a new key every
``NEW_KEY_EVERY`` rows, so the header is widened often) and ``x<j> = id * 100 + j``; rows
with ``id >= QUOTED_FROM`` also carry a text cell with a comma and quotes. After each
dump returns, the child prints ``a<id>`` on stdout (the side channel); before a dump that
widens the header it prints ``w<id>``.
"""
from __future__ import annotations

import csv
import os
import random
import sys
import time

NEW_KEY_EVERY = 20
QUOTED_FROM = 600


def keys_for(row_id: int) -> int:
    return 2 + row_id // NEW_KEY_EVERY


def text_for(row_id: int) -> str:
    return f'row {row_id}, "quoted"'


def main() -> None:
    log_dir, stop_at, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    from RLA.logger import Logger, TimeStepHolder

    rng = random.Random(seed)
    holder = TimeStepHolder()
    out = sys.stdout
    with Logger(log_dir, ["csv"], time_step=holder) as logger:
        path = os.path.join(log_dir, "progress.csv")
        next_id = 0
        if os.path.exists(path):
            with open(path, newline="") as handle:
                ids = [int(row["id"]) for row in csv.DictReader(handle)]
            next_id = ids[-1] + 1 if ids else 0
        out.write(f"s{next_id}\n")
        out.flush()
        for row_id in range(next_id, stop_at):
            holder.set_time(row_id)
            logger.logkv("id", row_id)
            for j in range(keys_for(row_id)):
                logger.logkv(f"x{j}", row_id * 100 + j)
            if row_id >= QUOTED_FROM:
                logger.logkv("text", text_for(row_id))
            if row_id == next_id or keys_for(row_id) != keys_for(row_id - 1) or row_id == QUOTED_FROM:
                out.write(f"w{row_id}\n")
                out.flush()
            logger.dumpkvs()
            out.write(f"a{row_id}\n")
            out.flush()
            time.sleep(rng.uniform(0.0, 0.002))


if __name__ == "__main__":
    main()
