"""Query and curve-loading speed of RLA against MLflow (sqlite store) and a plain glob+CSV script.

Workload (the issue's): 4 envs x 5 algos x 4 lrs x 25 seeds = 2,000 runs, each with a
1,000-point ``return`` curve (``--quick``: 4 x 5 x 2 x 5 = 200 runs of 200 points). Every
system stores the same numbers. Queries:

* Q1 list every run with its hyper-parameters and last ``return``;
* Q2 select the 25 seeds of one (env, algo, lr);
* Q3 Q2 plus load their ``return`` curves and average them per step;
* Q4 ``algo in ['sac','td3'] and lr >= 3e-4 and last('return') > T`` (MLflow cannot compare
  params numerically, so its ``lr`` range is applied in pandas afterwards, as a user would).

"warm" = the same process queried before (RLA: its SQLite index is current); "cold" = a
fresh process per repetition (imports excluded from the timing; RLA's index deleted first,
so it is rebuilt from the tree; the OS file cache stays warm for every system). Medians of
``--reps`` repetitions.

    python -m bench.bench_query            # full size
    python -m bench.bench_query --quick    # small variant
    python -m bench.bench_query --scale /tmp/rla_q1k:1000 /tmp/rla_q10k:10000 /tmp/rla_q100k:100000
                                           # issue #23: fresh CLI processes at 1k/10k/100k (bench/query_scale.py)
"""
from __future__ import annotations

from bench import common

import argparse
import datetime as _dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

RESULTS = Path(__file__).resolve().parent / "results" / "query.json"
ENVS = ["Hopper", "Walker2d", "Ant", "HalfCheetah"]
ALGOS = ["sac", "td3", "ppo", "ddpg", "a2c"]
TARGET = dict(env="Hopper", algo="sac", lr=1e-3)
SYSTEMS = ("rla", "mlflow", "glob")


def grid(quick: bool) -> Tuple[List[Dict[str, Any]], int]:
    """The runs' hyper-parameters and the curve length."""
    lrs = [1e-4, 3e-4, 1e-3, 3e-3] if not quick else [3e-4, 1e-3]
    seeds = 25 if not quick else 5
    params = [dict(env=e, algo=a, lr=lr, seed=s) for e in ENVS for a in ALGOS for lr in lrs for s in range(seeds)]
    return params, (1000 if not quick else 200)


def curve(i: int, points: int) -> List[float]:
    import numpy as np
    rng = np.random.default_rng(i)
    return np.round(np.cumsum(rng.normal(0.5, 1.0, points)), 4).tolist()


# -- creation --------------------------------------------------------------------------
def create_rla(root: Path, params: List[Dict[str, Any]], points: int) -> float:
    from RLA.query.testing import make_run
    steps = list(range(0, points * 1000, 1000))
    base = _dt.datetime(2026, 11, 1)
    start = time.perf_counter()
    for i, hp in enumerate(params):
        make_run(root, task="bench", params=hp, curves={"return": curve(i, points)}, steps=steps,
                 when=base + _dt.timedelta(seconds=i))
    return time.perf_counter() - start


def create_glob(root: Path, params: List[Dict[str, Any]], points: int) -> float:
    steps = range(0, points * 1000, 1000)
    start = time.perf_counter()
    for i, hp in enumerate(params):
        name = "&".join(f"{k}={v}" for k, v in sorted(hp.items()))
        folder = root / f"run{i:05d}_&{name}"
        folder.mkdir(parents=True)
        (folder / "params.json").write_text(json.dumps(hp))
        rows = "\n".join(f"{v!r},{s}" for v, s in zip(curve(i, points), steps))
        (folder / "progress.csv").write_text("return,time-step\n" + rows + "\n")
    return time.perf_counter() - start


def mlflow_client(root: Path):
    import logging
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    logging.getLogger("alembic").setLevel(logging.ERROR)
    import mlflow
    from mlflow.tracking import MlflowClient
    uri = f"sqlite:///{root / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    return mlflow, MlflowClient(tracking_uri=uri)


def create_mlflow(root: Path, params: List[Dict[str, Any]], points: int) -> float:
    from mlflow.entities import Metric, Param
    mlflow, client = mlflow_client(root)
    exp = client.create_experiment("bench", artifact_location=str(root / "artifacts"))
    start = time.perf_counter()
    for i, hp in enumerate(params):
        run = client.create_run(exp)
        rid = run.info.run_id
        now = int(time.time() * 1000)
        values = curve(i, points)
        for lo in range(0, points, 1000):
            metrics = [Metric("return", values[j], now, j * 1000) for j in range(lo, min(points, lo + 1000))]
            client.log_batch(rid, metrics=metrics, params=[Param(k, str(v)) for k, v in hp.items()] if lo == 0 else [])
        client.set_terminated(rid)
    return time.perf_counter() - start


# -- queries ---------------------------------------------------------------------------
def queries_rla(root: Path, threshold: float, verify: bool = False) -> Dict[str, Callable[[], int]]:
    """RLA's queries; ``verify=True`` stats every run's files on every query (no trust in
    settled runs, see RLA.query.warm)."""
    from RLA.query import list_runs, load_curves

    q2 = "env == '{env}' and algo == '{algo}' and lr == {lr}".format(**TARGET)
    q4 = f"algo in ['sac', 'td3'] and lr >= 3e-4 and last('return') > {threshold}"

    def q3() -> int:
        curves = load_curves(list_runs(root, where=q2, verify=verify), "return")
        return len(curves.groupby("time-step")["value"].mean())
    return {
        "Q1": lambda: len(list_runs(root, verify=verify)),
        "Q2": lambda: len(list_runs(root, where=q2, verify=verify)),
        "Q3": q3,
        "Q4": lambda: len(list_runs(root, where=q4, verify=verify)),
    }


def queries_mlflow(root: Path, threshold: float) -> Dict[str, Callable[[], int]]:
    mlflow, client = mlflow_client(root)
    exp = client.get_experiment_by_name("bench").experiment_id
    q2 = "params.env = '{env}' and params.algo = '{algo}' and params.lr = '{lr}'".format(**TARGET)

    def q3() -> int:
        import pandas as pd
        runs = mlflow.search_runs([exp], filter_string=q2)
        parts = []
        for rid in runs["run_id"]:
            history = client.get_metric_history(rid, "return")
            parts.append(pd.DataFrame({"step": [m.step for m in history], "value": [m.value for m in history]}))
        return len(pd.concat(parts).groupby("step")["value"].mean())

    def q4() -> int:
        # MLflow has no IN/OR on params and compares params as strings: filter the metric in
        # SQL, the rest in pandas.
        runs = mlflow.search_runs([exp], filter_string=f"metrics.return > {threshold}", max_results=100000)
        return int((runs["params.algo"].isin(["sac", "td3"]) & (runs["params.lr"].astype(float) >= 3e-4)).sum())
    return {
        "Q1": lambda: len(mlflow.search_runs([exp], max_results=100000)),
        "Q2": lambda: len(mlflow.search_runs([exp], filter_string=q2)),
        "Q3": q3,
        "Q4": q4,
    }


def queries_glob(root: Path, threshold: float) -> Dict[str, Callable[[], int]]:
    import glob

    import pandas as pd

    def table() -> Any:
        rows = []
        for folder in glob.glob(str(root / "run*")):
            with open(os.path.join(folder, "params.json")) as handle:
                row = json.load(handle)
            row["last_return"] = pd.read_csv(os.path.join(folder, "progress.csv"))["return"].iloc[-1]
            rows.append(row)
        return pd.DataFrame(rows)

    pattern = "run*_&algo={algo}&env={env}&lr={lr}&*".format(**TARGET)

    def q3() -> int:
        frames = [pd.read_csv(os.path.join(f, "progress.csv")) for f in glob.glob(str(root / pattern))]
        return len(pd.concat(frames).groupby("time-step")["return"].mean())

    def q4() -> int:
        frame = table()
        return int((frame["algo"].isin(["sac", "td3"]) & (frame["lr"] >= 3e-4) & (frame["last_return"] > threshold)).sum())
    return {"Q1": lambda: len(table()), "Q2": lambda: len(glob.glob(str(root / pattern))), "Q3": q3, "Q4": q4}


QUERIES = {"rla": queries_rla, "mlflow": queries_mlflow, "glob": queries_glob}


def cold_worker(system: str, root: str, query: str, threshold: float) -> None:
    """Run one query once in this fresh process and print its seconds (imports excluded)."""
    import numpy  # noqa: F401 - imported before timing for every system alike
    import pandas  # noqa: F401
    funcs = QUERIES[system](Path(root), threshold)
    start = time.perf_counter()
    count = funcs[query]()
    print(json.dumps({"seconds": time.perf_counter() - start, "count": count}))


#: Fast queries get more repetitions (same rule for every system): at least --reps, up to
#: MAX_REPS, within about REPS_BUDGET_S seconds per measure.
MAX_REPS, REPS_BUDGET_S = 50, 0.5


def median_time(fn: Callable[[], int], reps: int) -> Tuple[float, int]:
    start = time.perf_counter()
    count = fn()  # warm-up
    first = time.perf_counter() - start
    reps = max(reps, min(MAX_REPS, int(REPS_BUDGET_S / max(first, 1e-6))))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), count


def machine_info() -> Dict[str, Any]:
    return common.machine_info(["numpy", "pandas", "mlflow"])



def main(argv: List[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--scale"]:
        from bench.query_scale import main as scale
        return scale(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cold-reps", type=int, default=3)
    parser.add_argument("--skip-mlflow", action="store_true")
    parser.add_argument("--cold-worker", nargs=4, metavar=("SYSTEM", "ROOT", "QUERY", "THRESHOLD"))
    args = parser.parse_args(argv)
    if args.cold_worker:
        system, root, query, threshold = args.cold_worker
        cold_worker(system, root, query, float(threshold))
        return 0
    params, points = grid(args.quick)
    systems = [s for s in SYSTEMS if not (s == "mlflow" and args.skip_mlflow)]
    try:
        import mlflow  # noqa: F401
    except ImportError:
        if "mlflow" in systems:
            systems.remove("mlflow")
    load_before = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    work = Path(tempfile.mkdtemp(prefix="rla-bench-query-"))
    roots = {s: work / s for s in systems}
    for folder in roots.values():
        folder.mkdir()
    rows: List[Dict[str, Any]] = []
    results: Dict[str, Dict[str, float]] = {s: {} for s in systems}
    creators = {"rla": create_rla, "mlflow": create_mlflow, "glob": create_glob}
    try:
        for system in systems:
            print(f"creating {len(params)} runs x {points} points for {system} ...", flush=True)
            results[system]["create"] = creators[system](roots[system], params, points)
            if system == "rla":
                created_at = time.time()
        threshold = float(statistics.median(curve(i, points)[-1] for i in range(len(params))))
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        if "rla" in systems:
            # Measure a database of runs that ended a while ago (the usual case): RLA trusts a
            # run's files once they have been quiet for SETTLE_S; the verify rows check them all.
            from RLA.query.warm import SETTLE_S
            wait = SETTLE_S + 1 - (time.time() - created_at)
            if wait > 0:
                print(f"waiting {wait:.0f} s until RLA's runs are settled ...", flush=True)
                time.sleep(wait)
        for system in systems:
            funcs = QUERIES[system](roots[system], threshold)
            counts = {}
            for query in ("Q1", "Q2", "Q3", "Q4"):
                seconds, counts[query] = median_time(funcs[query], args.reps)
                results[system][f"{query} warm"] = seconds
            if system == "rla":
                checked = queries_rla(roots[system], threshold, verify=True)
                for query in ("Q1", "Q2", "Q3", "Q4"):
                    seconds, count = median_time(checked[query], args.reps)
                    assert count == counts[query], (query, count, counts[query])
                    results[system][f"{query} warm, verify=True"] = seconds
            cold = []
            for _ in range(args.cold_reps):
                if system == "rla":
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(roots[system] / ".rla_index.sqlite") + suffix).unlink(missing_ok=True)
                out = subprocess.run([sys.executable, "-m", "bench.bench_query", "--cold-worker", system,
                                      str(roots[system]), "Q1", str(threshold)], capture_output=True, text=True,
                                     env=env, check=True, timeout=3600)
                cold.append(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])
            results[system]["Q1 cold"] = statistics.median(cold)
            print(f"{system}: counts {counts}", flush=True)
        if "rla" in systems:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "rla_scripts.cli", "list", "--data-root", str(roots["rla"]),
                            "--format", "csv"], capture_output=True, env=env, check=True, timeout=600)
            results["rla"]["rla list (process wall time, warm)"] = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    measures = ["create", "Q1 warm", "Q1 cold", "Q2 warm", "Q3 warm", "Q4 warm",
                "Q1 warm, verify=True", "Q2 warm, verify=True", "Q3 warm, verify=True", "Q4 warm, verify=True",
                "rla list (process wall time, warm)"]
    for measure in measures:
        peer_measure = measure.replace(", verify=True", "")  # peers have no such mode: same figure
        row: Dict[str, Any] = {"measure": measure}
        for system in systems:
            value = results[system].get(measure if system == "rla" else peer_measure)
            row[f"{system} s"] = round(value, 4) if value is not None else ""
        base = results.get("rla", {}).get(measure)
        for system in systems:
            if system != "rla" and base and results[system].get(peer_measure):
                row[f"{system}/rla"] = round(results[system][peer_measure] / base, 1)
        rows.append(row)
    header = list(rows[0])
    widths = [max(len(str(h)), *(len(str(r.get(h, ""))) for r in rows)) for h in header]
    print("\n" + "  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(row.get(h, "")).ljust(w) for h, w in zip(header, widths)))
    rla = results.get("rla", {})
    goals: Dict[str, Any] = {}
    if rla:
        goals["Q1 warm <= 0.2 s"] = f"{rla['Q1 warm']:.3f} s: {'met' if rla['Q1 warm'] <= 0.2 else 'NOT met'}"
        goals["Q1 cold <= 3 s"] = f"{rla['Q1 cold']:.3f} s: {'met' if rla['Q1 cold'] <= 3 else 'NOT met'}"
        goals["Q3 <= 0.5 s"] = f"{rla['Q3 warm']:.3f} s: {'met' if rla['Q3 warm'] <= 0.5 else 'NOT met'}"
        if "mlflow" in results:
            for q in ("Q1 warm", "Q2 warm", "Q3 warm"):
                ratio = results["mlflow"][q] / rla[q]
                goals[f">= 10x faster than MLflow on {q}"] = f"{ratio:.1f}x: {'met' if ratio >= 10 else 'NOT met'}"
            for q in ("Q1 warm", "Q2 warm", "Q3 warm"):
                ratio = results["mlflow"][q] / rla[f"{q}, verify=True"]
                goals[f"(not a goal) MLflow / RLA on {q} with verify=True"] = f"{ratio:.1f}x"
    print("\ngoals:\n" + "\n".join(f"  {k}: {v}" for k, v in goals.items()))
    machine = machine_info()
    machine["load_average_1min_at_start"] = load_before
    report = {"area": "query", "date": _dt.datetime.now().isoformat(timespec="seconds"), "machine": machine,
              "workload": {"runs": len(params), "points_per_run": points, "quick": args.quick, "reps": args.reps,
                           "cold_reps": args.cold_reps},
              "rows": rows, "goals": goals,
              "notes": ["warm = repeated query in one process (RLA's SQLite index current); cold = first query "
                        "in a fresh process, imports excluded, RLA's index deleted first (rebuilt from the tree); "
                        "OS file cache warm for every system; warm figures are medians of --reps repetitions, "
                        "more for fast queries (up to 50 within about 0.5 s per measure, the same rule for "
                        "every system)",
                        "RLA's runs ended over a minute before the warm queries (settled, see RLA.query.warm): "
                        "a warm query re-checks every directory (creations, deletions, moves) and the files of "
                        "live runs, and a settled run's files at least every 30 s; the verify=True rows stat "
                        "every run's files on every query (the peers' figures are repeated there)",
                        "MLflow has no IN/OR on params and stores params as strings: its Q4 filters the metric "
                        "in search_runs and algo/lr in pandas afterwards",
                        "RLA runs are written as files (run.json, parameter.json, progress.csv) by "
                        "RLA.query.testing.make_run, not through the logger; glob = one params.json + "
                        "progress.csv per run read with pandas"]}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
