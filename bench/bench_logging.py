"""Logging overhead of RLA's logger against peers, same run, same data.

Workload: ``KEYS`` scalar keys per dump for ``--dumps`` dumps, plus one key that first
appears half way (so RLA widens progress.csv once). Every system logs the same python
floats at the same steps; the timed part is the logging loop plus the final close/flush
(construction and imports are excluded). Each system runs ``--reps`` times, each time in
a fresh temporary directory; the table shows the median (and min/max) of microseconds per
dump and the ratio of every peer to each RLA variant.

MLflow (sqlite store, ``log_metrics`` per step) is far slower than the others, so it runs
``--mlflow-dumps`` dumps (say so in any report); µs per dump is comparable regardless.

    python -m bench.bench_logging            # 20,000 dumps, 5 repetitions
    python -m bench.bench_logging --quick    # small variant
"""
from __future__ import annotations

from bench import common

import argparse
import datetime as _dt
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

KEYS = 10
RESULTS = Path(__file__).resolve().parent / "results" / "logging.json"

Workload = List[List[Tuple[str, float]]]


def make_workload(dumps: int, seed: int = 0) -> Workload:
    """Rows of (key, value); ``late_key`` appears from the middle dump on."""
    import numpy as np

    rng = np.random.default_rng(seed)
    values = rng.normal(size=(dumps, KEYS + 1)).tolist()
    keys = [f"train/key_{i}" for i in range(KEYS)]
    rows: Workload = []
    for step, vals in enumerate(values):
        row = list(zip(keys, vals[:KEYS]))
        if step >= dumps // 2:
            row.append(("train/late_key", vals[KEYS]))
        rows.append(row)
    return rows


# -- systems: each returns the seconds spent logging ``rows`` into ``folder`` ---------------
def run_rla(formats: List[str]) -> Callable[[Workload, str], float]:
    def run(rows: Workload, folder: str) -> float:
        from RLA.easy_log import logger
        from RLA.logger.time_step import time_step_holder

        logger.configure(dir=folder, format_strs=formats)
        record, dump, set_time = logger.record_tabular, logger.dump_tabular, time_step_holder.set_time
        start = time.perf_counter()
        for step, row in enumerate(rows):
            set_time(step)
            for key, value in row:
                record(key, value)
            dump()
        logger.reset()
        return time.perf_counter() - start
    return run


def run_tensorboardx(rows: Workload, folder: str) -> float:
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=folder)
    start = time.perf_counter()
    for step, row in enumerate(rows):
        for key, value in row:
            writer.add_scalar(key, value, step)
    writer.close()
    return time.perf_counter() - start


def run_sb3(rows: Workload, folder: str) -> float:
    from stable_baselines3.common.logger import configure

    sb3 = configure(folder, ["csv", "tensorboard"])
    start = time.perf_counter()
    for step, row in enumerate(rows):
        for key, value in row:
            sb3.record(key, value)
        sb3.dump(step=step)
    sb3.close()
    return time.perf_counter() - start


def run_mlflow(rows: Workload, folder: str) -> float:
    import logging

    import mlflow

    logging.getLogger("mlflow").setLevel(logging.ERROR)
    logging.getLogger("alembic").setLevel(logging.ERROR)
    mlflow.set_tracking_uri(f"sqlite:///{folder}/mlflow.db")
    mlflow.set_experiment("bench")
    mlflow.start_run()
    start = time.perf_counter()
    for step, row in enumerate(rows):
        mlflow.log_metrics(dict(row), step=step)
    mlflow.end_run()
    return time.perf_counter() - start


def available(module: str) -> Optional[str]:
    """``None`` if ``module`` imports, else the reason it does not."""
    try:
        __import__(module)
    except Exception as exc:  # noqa: BLE001 - any failure means "skip this peer"
        return f"{type(exc).__name__}: {exc}"
    return None


def machine_info() -> Dict[str, Any]:
    return common.machine_info(["numpy", "tensorboardX", "stable-baselines3", "mlflow", "torch"])



def measure(name: str, fn: Callable[[Workload, str], float], rows: Workload, reps: int) -> Dict[str, Any]:
    """Median over ``reps`` runs after one discarded warm-up run (imports, caches, sqlite schema)."""
    per_dump: List[float] = []
    for rep in range(reps + 1):
        folder = tempfile.mkdtemp(prefix="rla-bench-")
        try:
            gc.collect()
            seconds = fn(rows if rep else rows[: max(1, len(rows) // 10)], folder)
            if rep:
                per_dump.append(seconds / len(rows) * 1e6)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return {"system": name, "dumps": len(rows), "reps": reps,
            "us_per_dump_median": statistics.median(per_dump),
            "us_per_dump_min": min(per_dump), "us_per_dump_max": max(per_dump),
            "us_per_dump_all": per_dump}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small variant (2,000 dumps, 3 reps)")
    parser.add_argument("--dumps", type=int, default=None, help="dumps per run (default 20000)")
    parser.add_argument("--mlflow-dumps", type=int, default=None, help="dumps for MLflow (default 1000)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5)")
    parser.add_argument("--output", default=str(RESULTS), help="where to write the JSON results")
    args = parser.parse_args(argv)
    dumps = args.dumps or (2000 if args.quick else 20000)
    mlflow_dumps = args.mlflow_dumps or (200 if args.quick else 1000)
    reps = args.reps or (3 if args.quick else 5)

    rows = make_workload(dumps)
    systems: List[Tuple[str, Callable[[Workload, str], float], Workload, Optional[str]]] = [
        ("RLA csv", run_rla(["csv"]), rows, None),
        ("RLA csv+log", run_rla(["csv", "log"]), rows, None),
        ("RLA csv+tensorboard", run_rla(["csv", "tensorboard"]), rows, available("tensorboardX")),
        ("tensorboardX add_scalar", run_tensorboardx, rows, available("tensorboardX")),
        ("SB3 logger csv+tensorboard", run_sb3, rows, available("stable_baselines3")),
        ("MLflow sqlite log_metrics", run_mlflow, make_workload(mlflow_dumps), available("mlflow")),
    ]
    results: List[Dict[str, Any]] = []
    skipped: Dict[str, str] = {}
    for name, fn, data, missing in systems:
        if missing:
            skipped[name] = missing
            print(f"skip {name}: {missing}", flush=True)
            continue
        print(f"measuring {name} ({len(data)} dumps x {reps}) ...", flush=True)
        results.append(measure(name, fn, data, reps))

    by_name = {r["system"]: r["us_per_dump_median"] for r in results}
    rla = [r for r in results if r["system"].startswith("RLA")]
    peers = [r for r in results if not r["system"].startswith("RLA")]
    for r in results:
        r["ratio_to"] = {p["system"]: p["us_per_dump_median"] / r["us_per_dump_median"]
                         for p in peers if p is not r} if r in rla else {}

    print()
    print(f"{'system':<28} {'dumps':>6} {'µs/dump (median)':>17} {'min':>9} {'max':>9}")
    for r in results:
        print(f"{r['system']:<28} {r['dumps']:>6} {r['us_per_dump_median']:>17.1f} "
              f"{r['us_per_dump_min']:>9.1f} {r['us_per_dump_max']:>9.1f}")
    if rla and peers:
        print("\npeer µs/dump ÷ RLA µs/dump (>1: RLA faster)")
        print(f"{'':<22}" + "".join(f"{p['system'][:24]:>26}" for p in peers))
        for r in rla:
            print(f"{r['system']:<22}" + "".join(f"{r['ratio_to'][p['system']]:>25.2f}x" for p in peers))
    goals = {}
    if "RLA csv+log" in by_name and "MLflow sqlite log_metrics" in by_name:
        goals["csv+log >= 20x faster than MLflow"] = \
            by_name["MLflow sqlite log_metrics"] / by_name["RLA csv+log"] >= 20
    if "RLA csv+log" in by_name and "tensorboardX add_scalar" in by_name:
        goals["csv+log within 1.5x of bare tensorboardX"] = \
            by_name["RLA csv+log"] <= 1.5 * by_name["tensorboardX add_scalar"]
    if goals:
        print("\ngoals: " + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in goals.items()))

    report = {"benchmark": "logging", "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
              "machine": machine_info(), "workload": {
                  "keys": KEYS, "late_key_from": dumps // 2, "dumps": dumps,
                  "mlflow_dumps": mlflow_dumps, "reps": reps, "quick": args.quick},
              "rows": results, "skipped": skipped, "goals": goals}
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
