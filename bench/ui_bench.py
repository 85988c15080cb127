"""Dashboard speed in a real headless Chromium: runs table, filter redraw, grouped chart, server memory.

Databases written with :func:`RLA.query.testing.make_run` (the query bench's fixture writer):
N runs (4 envs x 5 algos x 4 lrs x seeds) of a 200-point ``return`` curve, plus a ``charts``
task of 100 runs x 1,000 points in 5 groups (lr) for the chart. For each size a real
``rla ui`` child process serves the data root and Debian's Chromium (Selenium) measures:

* ``table_cold``: navigation to the runs table shown, first request (catalog built from the tree);
* ``table_warm``: the same after a reload (median of 3);
* ``filter``: a ``where`` typed (input event) to the table redrawn with the new rows, the
  page's 120 ms typing debounce included (median of 3);
* ``chart``: navigation to 100 runs x 1,000 points in 5 groups with bootstrap CI bands drawn
  (median of 3);
* ``rss_mb``: the server's resident memory after all of the above.

Peers (TensorBoard, MLflow UI) are measured only when installed; this version measures RLA only.

    python -m bench.ui_bench --sizes 2000 10000
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "ui"))


def write_db(root: Path, runs: int) -> float:
    """``runs`` sweep runs plus the 100 x 1,000-point chart task; returns seconds spent."""
    import math

    from RLA.query.testing import make_run

    start = time.perf_counter()
    envs, algos, lrs = ("Hopper", "Walker", "Ant", "Humanoid"), ("sac", "td3", "ppo", "ddpg", "dqn"), (1e-4, 3e-4, 1e-3, 3e-3)
    seeds = max(1, runs // (len(envs) * len(algos) * len(lrs)))
    i = 0
    for env in envs:
        for algo in algos:
            for lr in lrs:
                for seed in range(seeds):
                    curve = [float(round(math.sin(k / 9 + i) * 10 + k * lr * 100, 3)) for k in range(200)]
                    make_run(root, task=f"bench/{env}", params={"env": env, "algo": algo, "lr": lr, "seed": seed},
                             curves={"return": curve}, steps=[k * 100 for k in range(200)])
                    i += 1
    for g, lr in enumerate((1e-4, 3e-4, 1e-3, 3e-3, 1e-2)):
        for seed in range(20):
            curve = [float(round(100 * (1 - math.exp(-k / (200 + 100 * g))) + math.sin(k / 7 + seed) * 5, 3))
                     for k in range(1000)]
            make_run(root, task="charts", params={"lr": lr, "seed": seed}, curves={"return": curve},
                     steps=[k * 1000 for k in range(1000)])
    return time.perf_counter() - start


def timed(fn: Callable[[], Any], until: Callable[[], bool], limit: float = 120.0) -> float:
    start = time.perf_counter()
    fn()
    while not until():
        if time.perf_counter() - start > limit:
            raise TimeoutError("the page did not finish within the time limit")
        time.sleep(0.005)
    return time.perf_counter() - start


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(url: str, pid: int) -> Dict[str, float]:
    import browser

    driver = browser.start()
    rows = lambda: driver.execute_script(
        "return document.querySelectorAll('#runs-table tbody tr[data-index]').length")
    try:
        out: Dict[str, float] = {}
        out["table_cold"] = timed(lambda: driver.get(url + "#/runs"), lambda: rows() > 0)
        warm: List[float] = []
        for _ in range(3):
            driver.get("about:blank")
            warm.append(timed(lambda: driver.get(url + "#/runs"), lambda: rows() > 0))
        out["table_warm"] = statistics.median(warm)
        filt: List[float] = []
        for k, where in enumerate(("algo == 'sac' and lr >= 1e-3", "env == 'Ant' and seed < 3", "lr == 1e-4")):
            first = driver.execute_script("var r = document.querySelector('#runs-table tbody tr'); return r && r.dataset.index;")
            set_where = (f"var w = document.getElementById('where'); w.value = {where!r};"
                         "w.dispatchEvent(new Event('input'));")
            filt.append(timed(lambda: driver.execute_script(set_where), lambda: driver.execute_script(
                "var r = document.querySelector('#runs-table tbody tr'); return r && r.dataset.index;") != first
                and not driver.execute_script("return document.getElementById('runs-table').classList.contains('loading')")))
        out["filter"] = statistics.median(filt)
        charts: List[float] = []
        for _ in range(3):
            driver.get("about:blank")
            charts.append(timed(lambda: driver.get(url + "#/charts?task=charts&metric=return&group=lr&band=ci"),
                                lambda: driver.execute_script("return document.body.dataset.chartsDrawn || ''") != ""))
        out["chart"] = statistics.median(charts)
        out["rss_mb"] = rss_mb(pid)
        return out
    finally:
        driver.quit()


def main(argv: List[str] = None) -> int:
    import conftest  # the test fixtures' server starter

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    args = parser.parse_args(argv)
    import os
    env = dict(os.environ, PYTHONPATH=str(REPO))
    results = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="rla-ui-bench-") as tmp:
            root = Path(tmp) / "data"
            root.mkdir()
            wrote = write_db(root, size)
            proc, url = conftest.start_server(root, env=env)
            try:
                results[size] = dict(measure(url, proc.pid), write_s=wrote)
            finally:
                conftest.stop_server(proc)
        print(f"{size} runs: " + ", ".join(f"{k} {v:.3f}" for k, v in results[size].items()), flush=True)
    goals = {"table_warm": 1.0, "filter": 0.2, "chart": 0.5, "rss_mb": 500}
    print("\n| runs | table shown (first / warm) | filter redrawn | 100x1000 chart, 5 groups, CI | server RSS |")
    print("|---|---|---|---|---|")
    for size, r in results.items():
        print(f"| {size:,} | {r['table_cold']:.2f} s / {r['table_warm']:.2f} s | {r['filter'] * 1000:.0f} ms | "
              f"{r['chart'] * 1000:.0f} ms | {r['rss_mb']:.0f} MB |")
    print("goals: " + ", ".join(f"{k} <= {v}" for k, v in goals.items()))
    print("peers: TensorBoard / MLflow UI not measured by this version of the bench")
    return 0


if __name__ == "__main__":
    sys.exit(main())
