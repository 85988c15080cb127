"""The scale benchmark's data roots: sweep runs written by RLA's fixture writer, in parallel.

4 envs x 5 algos x 5 lrs x seeds, a 50-point ``return`` curve each, start times spread over a
year (so runs fall in ~365 day folders, as a lab's would). The selective query of the
benchmark (:data:`SELECTIVE`) matches :data:`MATCHES` runs at every size.

    python -m bench.query_corpus /tmp/rla_q100k 100000
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import List, Tuple

ENVS = ("Hopper", "Walker2d", "Ant", "HalfCheetah")
ALGOS = ("sac", "td3", "ppo", "ddpg", "a2c")
LRS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
POINTS = 50
MATCHES = 5
#: The same selective query at every size: one (env, algo, lr) cell, its first 5 seeds.
SELECTIVE = "env == 'Hopper' and algo == 'sac' and lr == 0.001 and seed < 5"
_BASE = _dt.datetime(2025, 11, 1)
_YEAR_S = 365 * 86400


def params_of(i: int) -> dict:
    """Hyper-parameters of run ``i`` (the grid cell cycles fastest, then the seed)."""
    cell, seed = i % 100, i // 100
    return {"env": ENVS[cell // 25], "algo": ALGOS[(cell // 5) % 5], "lr": LRS[cell % 5], "seed": seed}


def _write(job: Tuple[str, int, int, int]) -> int:
    from RLA.query.testing import make_run

    root, lo, hi, total = job
    steps = [k * 1000 for k in range(POINTS)]
    for i in range(lo, hi):
        curve = [round(math.sin(k / 7 + i) * 10 + k, 3) for k in range(POINTS)]
        when = _BASE + _dt.timedelta(seconds=i * (_YEAR_S // max(total, 1)), microseconds=i % 1000)
        make_run(Path(root), task="sweep", params=params_of(i), curves={"return": curve}, steps=steps,
                 when=when, host="bench")
    return hi - lo


def write_corpus(root: Path, runs: int, start: int = 0, workers: int = 2) -> float:
    """Write runs ``start .. runs-1`` into ``root``; returns seconds spent."""
    began = time.perf_counter()
    chunk = 500
    jobs: List[Tuple[str, int, int, int]] = [(os.fspath(root), lo, min(lo + chunk, runs), runs)
                                             for lo in range(start, runs, chunk)]
    with ProcessPoolExecutor(workers) as pool:
        for _ in pool.map(_write, jobs):
            pass
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("runs", type=int)
    args = parser.parse_args()
    print(f"{args.runs} runs in {write_corpus(args.root, args.runs):.1f}s")


if __name__ == "__main__":
    main()
