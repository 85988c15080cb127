"""Kill trials of delete / archive / migrate: SIGKILL at random times, repair, count damage.

For each operation (``delete``, ``delete --purge``, ``archive``, ``archive --copy``,
``migrate``, ``migrate --move``) on a fresh copy of a database of ``--runs`` complete runs
(every data type, 3 files of 4 KiB per folder): fork a child running the real ``rla``
command, SIGKILL it at a random time (seeded; half of the kills uniform over the whole
command, half uniform from the moment its journal appears, i.e. the moves start, to 1.2 x
its measured end: see RLA.ops.testing.kill_times), repair (alternately ``rla fsck --repair`` and the same command again),
then compare every file with the manifest taken before (RLA.ops.testing.evaluate).

    python -m bench.kill_ops                 # 20 kills per operation
    python -m bench.kill_ops --kills 50 --runs 8
"""
from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path

from RLA.ops import testing


def trials(op: str, kills: int, template: Path, work: Path, seed: int) -> dict:
    """Run ``kills`` trials of ``op``; returns the table row."""
    window = testing.measure(template, work, op, reps=3)
    delays = testing.kill_times(random.Random(f"{seed}-{op}"), window, kills)
    row = {"op": op, "kills": kills, "ms": (window[1] - window[0]) * 1000, "interrupted": 0, "split": 0,
           "orphaned": 0, "lost": 0, "leftovers": 0, "notes": []}
    for i, delay in enumerate(delays):
        outcome = testing.kill_trial(template, work, op, delay, "fsck" if i % 2 == 0 else "rerun")
        row["interrupted"] += outcome.interrupted
        for key in ("split", "orphaned", "lost", "leftovers"):
            row[key] += getattr(outcome, key)
        row["notes"] += outcome.notes
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--runs", type=int, default=testing.DEFAULT_RUNS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rla-kill-ops-"))
    try:
        template = work / "template"
        template.mkdir()
        testing.make_database(template, runs=args.runs)
        testing.warm_up(template)
        rows = [trials(op, args.kills, template, work, args.seed) for op in testing.OPS]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} runs x 6 data types, seed {args.seed}\n")
    print("| operation | kills | mid-operation | split / orphaned after repair | files lost | leftovers | moves took |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| `{row['op']}` | {row['kills']} | {row['interrupted']} | {row['split']} / {row['orphaned']} | "
              f"{row['lost']} | {row['leftovers']} | {row['ms']:.0f} ms |")
    for row in rows:
        for note in row["notes"][:5]:
            print(f"  {row['op']}: {note}")


if __name__ == "__main__":
    main()
