"""Issue #23's benchmark: the same selective ``rla list --where`` at 1,000 / 10,000 / 100,000 runs.

Every query is a fresh process through the CLI (``rla list ... --format csv``), so imports,
the index check and the answer are all counted; peak memory is the child's maximum RSS
(``/usr/bin/time -f %M``). Roots are written once by :mod:`bench.query_corpus` (into /tmp,
not the repository). Measures per size: the first query with the index missing (built from
the tree), the steady selective query (median of 5), listing every run as CSV, and on the
largest root the first query after 100 new runs were written. MLflow (sqlite store,
``search_runs`` with the equivalent filter) at 10,000 runs when it is installed.

    python -m bench.query_scale /tmp/rla_q1k:1000 /tmp/rla_q10k:10000 /tmp/rla_q100k:100000
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from bench.query_corpus import MATCHES, SELECTIVE, write_corpus

RESULTS = Path(__file__).resolve().parent / "results" / "query_scale.json"


#: CPU seconds (user + system) of the last :func:`cli` call: on a shared machine the wall time
#: mostly measures the other processes, the CPU time what RLA did.
LAST_CPU = [0.0]


def cli(root: Path, *extra: str) -> Tuple[float, float, int]:
    """``(seconds, peak MB, output lines)`` of one ``rla list`` in a fresh process."""
    cmd = [
        "/usr/bin/time",
        "-f",
        "%U %S %M",
        sys.executable,
        "-m",
        "rla_scripts.cli",
        "list",
        "--data-root",
        os.fspath(root),
        "--format",
        "csv",
        *extra,
    ]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=3600)
    seconds = time.perf_counter() - start
    user, system, peak = out.stderr.strip().splitlines()[-1].split()
    LAST_CPU[0] = float(user) + float(system)
    peak_kb = int(peak)
    return seconds, peak_kb / 1024, max(0, len(out.stdout.splitlines()) - 1)


def drop_index(root: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(root / f".rla_index.sqlite{suffix}")
        except FileNotFoundError:
            pass


def measure_root(root: Path, size: int, reps: int, cold: bool) -> Dict[str, Any]:
    out: Dict[str, Any] = {"runs": size}
    if cold:
        drop_index(root)
        out["cold_s"], out["cold_mb"], _ = cli(root, "--where", SELECTIVE)
        out["cold_cpu_s"] = LAST_CPU[0]  # the parent's; the worker processes' CPU is not in it
    steady, cpu = [], []
    for _ in range(reps):
        steady.append(cli(root, "--where", SELECTIVE))
        cpu.append(LAST_CPU[0])
    assert all(n == MATCHES for _, _, n in steady), steady
    out["steady_s"] = statistics.median(s for s, _, _ in steady)
    out["steady_range_s"] = [min(s for s, _, _ in steady), max(s for s, _, _ in steady)]
    out["steady_cpu_s"] = statistics.median(cpu)
    out["steady_mb"] = max(m for _, m, _ in steady)
    out["list_all_s"], out["list_all_mb"], out["list_all_rows"] = cli(root)
    out["list_all_cpu_s"] = LAST_CPU[0]
    out["load_avg"] = os.getloadavg()[0]
    return out


def after_new_runs(root: Path, size: int) -> float:
    """Write 100 new runs (none matches) into ``root``; the next selective query's seconds."""
    from RLA.query.testing import make_run

    base = _dt.datetime(2026, 11, 20)
    for i in range(100):
        make_run(
            root,
            task="sweep",
            params={"env": "New", "algo": "sac", "lr": 1e-3, "seed": size + i},
            curves={"return": [0.0, 1.0]},
            when=base + _dt.timedelta(seconds=i),
            host="bench",
        )
    seconds, _, n = cli(root, "--where", SELECTIVE)
    assert n == MATCHES
    return seconds


def mlflow_10k(tmp: Path, size: int) -> Dict[str, Any]:
    """The same runs and filter in MLflow's sqlite store, if MLflow is installed."""
    try:
        import mlflow  # noqa: F401
    except ImportError:
        return {"skipped": "mlflow is not installed"}
    from bench.query_mlflow import measure

    return measure(tmp, size)


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("roots", nargs="+", help="ROOT:RUNS (written when missing)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-cold", action="store_true", help="keep the index (skip the cold build)")
    parser.add_argument(
        "--no-new", action="store_true", help="do not write 100 new runs into the largest root"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON results go")
    parser.add_argument("--mlflow", type=Path, help="folder for MLflow's store at 10,000 runs")
    args = parser.parse_args(argv)
    rows = []
    for item in args.roots:
        path, _, count = item.rpartition(":")
        root, size = Path(path), int(count)
        if not (root / "log").exists():
            write_corpus(root, size)
        rows.append(measure_root(root, size, args.reps, not args.no_cold))
        print(json.dumps(rows[-1]), flush=True)
    largest = max(zip(rows, args.roots), key=lambda pair: pair[0]["runs"])
    if not args.no_new:
        largest[0]["after_100_new_s"] = after_new_runs(
            Path(largest[1].rpartition(":")[0]), largest[0]["runs"]
        )
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "query": SELECTIVE,
        "sizes": rows,
        "mlflow": mlflow_10k(args.mlflow, 10_000) if args.mlflow else {"skipped": "not asked"},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


def machine() -> Dict[str, Any]:
    import platform

    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_start": os.getloadavg()[0],
    }


if __name__ == "__main__":
    sys.exit(main())
