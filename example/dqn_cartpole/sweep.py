"""A seed x learning-rate sweep of the DQN example, then the RLA tools on its runs.

    python example/dqn_cartpole/sweep.py --data-root ./data            # 3 seeds x 2 lrs
    python example/dqn_cartpole/sweep.py --data-root ./data --quick    # a short variant

Runs ``main.py`` for every (seed, lr) in parallel processes (at most ``--jobs`` at once, one
torch thread each, so 2 cores are not oversubscribed), all into one data root and labelled
with one ``--group``; then prints ``rla list --where "group == ..."``, ``rla plot`` grouped by
learning rate (mean and 95% bootstrap CI over seeds, unsmoothed) and ``rla view`` of the best run
(highest maximum greedy return, then highest last one).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Sequence

HERE = Path(__file__).resolve().parent
TASK = "dqn_cartpole"
FULL = ["--total-steps", "30000", "--eval-interval", "2500", "--eval-episodes", "20",
        "--checkpoint-interval", "5000", "--figure-interval", "10000"]
QUICK = ["--total-steps", "5000", "--eval-interval", "1000", "--eval-episodes", "10", "--learning-starts", "500",
         "--checkpoint-interval", "2500", "--figure-interval", "5000", "--eps-decay-steps", "4000"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", default=str(HERE / "data"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--lrs", type=float, nargs="+", default=[5e-4, 1e-3])
    parser.add_argument("--jobs", type=int, default=2, help="training processes at once")
    parser.add_argument("--quick", action="store_true", help="a short sweep (a few thousand steps per run)")
    parser.add_argument("--group", default=None, help="label of the sweep's runs (default: sweep-<time>)")
    parser.add_argument("--out", default=None, help="figure path (default: <data-root>/results/easy_plot/<group>.png)")
    return parser.parse_args(argv)


def rla(*args: str) -> str:
    """Run an ``rla`` command, print and return its output (the console script or the module)."""
    command = [sys.executable, "-m", "rla_scripts.cli", *args]
    print("$ rla " + " ".join(shlex.quote(a) for a in args), flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    print(done.stdout + done.stderr, flush=True)
    if done.returncode != 0:
        raise SystemExit(f"rla {args[0]} failed with exit code {done.returncode}")
    return done.stdout


def train(seed: int, lr: float, args: argparse.Namespace) -> float:
    command = [sys.executable, str(HERE / "main.py"), "--seed", str(seed), "--lr", str(lr), "--group", args.group,
               "--data-root", args.data_root, "--quiet", *(QUICK if args.quick else FULL)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"seed {seed} lr {lr} failed:\n{done.stderr[-3000:]}")
    print(f"  seed {seed} lr {lr:g}: done in {took:.0f} s", flush=True)
    return took


def best_run(data_root: str, where: str) -> str:
    """Index of the run with the highest maximum (then last) greedy return."""
    from RLA import query

    frame = query.list_runs(data_root, task=TASK, where=where)
    frame = frame.sort_values(["max(eval/return)", "last(eval/return)"], ascending=False)
    return str(frame.iloc[0]["index"])


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    args.data_root = str(Path(args.data_root).resolve())
    args.group = args.group or "sweep-" + _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or os.path.join(args.data_root, "results", "easy_plot", f"{args.group}.png")
    jobs: List[tuple] = list(itertools.product(args.seeds, args.lrs))
    print(f"{len(jobs)} runs ({len(args.seeds)} seeds x {len(args.lrs)} learning rates), {args.jobs} at once, "
          f"group {args.group!r}, data root {args.data_root}", flush=True)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(lambda job: train(job[0], job[1], args), jobs))
    print(f"sweep trained in {time.monotonic() - started:.0f} s\n", flush=True)

    where = f'group == "{args.group}"'
    common = ["--data-root", args.data_root, "--task", TASK, "--where", where]
    rla("list", *common, "--columns", "index,status,lr,seed,last(eval/return),max(eval/return)",
        "--sort", "lr")
    rla("plot", *common, "--metrics", "eval/return", "train/episode_return", "--split-keys", "lr",
        "--band", "ci", "--resample", "0", "--smooth", "0", "--title", f"DQN CartPole-v1 ({len(args.seeds)} seeds)", "--out", out)
    rla("view", "--data-root", args.data_root, best_run(args.data_root, where))
    print(f"figure: {out}")


if __name__ == "__main__":
    main()
