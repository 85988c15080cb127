"""Dashboard speed in a real headless Chromium: runs table, filter redraw, grouped chart, server memory.

Databases written with :func:`RLA.query.testing.make_run` (the query bench's fixture writer):
N runs (4 envs x 5 algos x 4 lrs x seeds) of a 200-point ``return`` curve, plus a ``charts``
task of 100 runs x 1,000 points in 5 groups (lr) for the chart. For each size a real
``rla ui`` child process serves the data root and Debian's Chromium (Selenium) measures,
twice: right after the runs were written (none of them settled yet: see
:mod:`RLA.query.warm`), and again once they have settled (a minute later):

* ``table_cold``: navigation to the runs table shown, first request (index built from the tree);
* ``table_warm``: the same after a reload (median of 3);
* ``filter``: a ``where`` typed (input event) to the table redrawn with the new rows, the
  page's 40 ms typing debounce included, timed by the page's own clock (median and max of
  3; ``filter_request``: the /api/runs request's part); each phase types filters the server
  has not answered before;
* ``chart_first``: navigation to 100 runs x 1,000 points in 5 groups with bootstrap CI bands
  drawn, the first time (the curves are loaded and aggregated), with its ``/api/curves``
  request and request-to-drawn parts (``chart_first_request``, ``chart_first_request_to_drawn``);
* ``chart``: the same again (median of 3), with ``chart_request`` (the ``/api/curves``
  request, from the browser's resource timing) and ``chart_request_to_drawn`` (from the
  request to the chart drawn, measured by the page);
* ``rss_mb``: the server's resident memory after all of the above.

Peers (TensorBoard, MLflow UI): ``bench.ui_peers``. Raw numbers: ``bench/results/ui_bench.json``.

    python -m bench.ui_bench --sizes 2000 10000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "ui"))


def write_db(root: Path, runs: int) -> float:
    """``runs`` sweep runs plus the 100 x 1,000-point chart task; returns seconds spent."""
    import math

    from RLA.query.testing import make_run

    start = time.perf_counter()
    envs, algos, lrs = (
        ("Hopper", "Walker", "Ant", "Humanoid"),
        ("sac", "td3", "ppo", "ddpg", "dqn"),
        (1e-4, 3e-4, 1e-3, 3e-3),
    )
    seeds = max(1, runs // (len(envs) * len(algos) * len(lrs)))
    i = 0
    for env in envs:
        for algo in algos:
            for lr in lrs:
                for seed in range(seeds):
                    curve = [float(round(math.sin(k / 9 + i) * 10 + k * lr * 100, 3)) for k in range(200)]
                    make_run(
                        root,
                        task=f"bench/{env}",
                        params={"env": env, "algo": algo, "lr": lr, "seed": seed},
                        curves={"return": curve},
                        steps=[k * 100 for k in range(200)],
                    )
                    i += 1
    for g, lr in enumerate((1e-4, 3e-4, 1e-3, 3e-3, 1e-2)):
        for seed in range(20):
            curve = [
                float(round(100 * (1 - math.exp(-k / (200 + 100 * g))) + math.sin(k / 7 + seed) * 5, 3))
                for k in range(1000)
            ]
            make_run(
                root,
                task="charts",
                params={"lr": lr, "seed": seed},
                curves={"return": curve},
                steps=[k * 1000 for k in range(1000)],
            )
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


#: A different set of filters per phase, so no answer is served from the previous phase's cache.
FILTERS = {
    "fresh": ("algo == 'sac' and lr >= 1e-3", "env == 'Ant' and seed < 3", "lr == 1e-4"),
    "settled": ("algo == 'td3' and lr <= 3e-4", "env == 'Hopper' and seed > 2", "lr == 3e-3"),
}
CHART = "#/charts?task=charts&metric=return&group=lr&band=ci"


def first_row(driver: Any) -> Any:
    return driver.execute_script(
        "var r = document.querySelector('#runs-table tbody tr'); return r && r.dataset.index;"
    )


def rows_shown(driver: Any) -> int:
    return driver.execute_script(
        "return document.querySelectorAll('#runs-table tbody tr[data-index]').length"
    )


def filter_times(driver: Any, url: str, wheres: Any) -> List[Dict[str, float]]:
    """Each ``where`` typed (input event) until the table is drawn with other rows, debounce
    included: measured by the page's own clock (from the input event to the table drawn), so
    the WebDriver's polling adds nothing; ``request`` is the /api/runs request's part."""
    driver.get(url + "#/runs")
    timed(lambda: None, lambda: rows_shown(driver) > 0)
    out: List[Dict[str, float]] = []
    for where in wheres:
        before = first_row(driver)
        typed = driver.execute_script(
            f"var w = document.getElementById('where'); w.value = {where!r};"
            "var t = performance.now(); w.dispatchEvent(new Event('input')); return t;"
        )
        timed(lambda: None, partial(_redrawn, driver, before))
        drawn = float(driver.execute_script("return Number(document.body.dataset.runsDrawn)"))
        request = driver.execute_script(
            "var e = performance.getEntriesByType('resource').filter(function (r) {"
            " return r.name.indexOf('/api/runs') >= 0 && r.name.indexOf('where=') >= 0; });"
            "var r = e[e.length - 1]; return (r.responseEnd - r.startTime) / 1000;"
        )
        out.append({"total": (drawn - typed) / 1000, "request": float(request)})
    return out


def _redrawn(driver: Any, before: Any) -> bool:
    """The table shows other rows than ``before`` and is not loading."""
    loading = "return document.getElementById('runs-table').classList.contains('loading')"
    return bool(first_row(driver) != before and not driver.execute_script(loading))


def chart_time(driver: Any, url: str) -> Dict[str, float]:
    """Navigation to the grouped chart drawn, and how much of it the /api/curves request took."""
    driver.get("about:blank")
    total = timed(
        lambda: driver.get(url + CHART),
        lambda: driver.execute_script("return document.body.dataset.chartsDrawn || ''") != "",
    )
    request = driver.execute_script(
        "var e = performance.getEntriesByType('resource').filter(function (r) { return r.name.indexOf('/api/curves') >= 0; });"
        "return e.length ? (e[e.length - 1].responseEnd - e[e.length - 1].startTime) / 1000 : null;"
    )
    drawn = driver.execute_script(
        "var m = (document.getElementById('chart-status').textContent.match(/drawn in (\\d+) ms/) || []); return m[1] || null;"
    )
    return {
        "total": total,
        "request": float(request or "nan"),
        "request_to_drawn": float(drawn or "nan") / 1000,
    }


def measure(url: str, pid: int, phase: str, first: bool) -> Dict[str, Any]:
    import browser  # type: ignore[import-not-found]  # test/ui helper, put on sys.path above

    driver = browser.start()
    try:
        out: Dict[str, Any] = {}
        if first:
            out["table_cold"] = timed(lambda: driver.get(url + "#/runs"), lambda: rows_shown(driver) > 0)
        warm: List[float] = []
        for _ in range(3):
            driver.get("about:blank")
            warm.append(timed(lambda: driver.get(url + "#/runs"), lambda: rows_shown(driver) > 0))
        out["table_warm"] = statistics.median(warm)
        filt = filter_times(driver, url, FILTERS[phase])
        out["filter"] = statistics.median(f["total"] for f in filt)
        out["filter_max"] = max(f["total"] for f in filt)
        out["filter_request"] = statistics.median(f["request"] for f in filt)
        charts = [chart_time(driver, url) for _ in range(4 if first else 3)]
        if first:  # the first chart of this server computes the curves; later ones reuse them
            first_chart = charts.pop(0)
            out["chart_first"] = first_chart["total"]
            out["chart_first_request"] = first_chart["request"]
            out["chart_first_request_to_drawn"] = first_chart["request_to_drawn"]
        for key in ("total", "request", "request_to_drawn"):
            out["chart" if key == "total" else "chart_" + key] = statistics.median(c[key] for c in charts)
        out["rss_mb"] = rss_mb(pid)
        return out
    finally:
        driver.quit()


def settle(root: Path, written_at: float, url: str) -> float:
    """Wait until every run is settled (a minute without changes, then one refresh); seconds waited."""
    from RLA.query.warm import SETTLE_S

    start = time.monotonic()
    rest = SETTLE_S + 5 - (time.monotonic() - written_at)
    if rest > 0:
        time.sleep(rest)
    import urllib.request

    urllib.request.urlopen(url + "api/tasks", timeout=120).read()  # wakes the refresher
    time.sleep(5)
    return time.monotonic() - start


def main(argv: Optional[List[str]] = None) -> int:
    import conftest  # type: ignore[import-not-found]  # the test fixtures' server starter (test/ui)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    results: Dict[int, Dict[str, Any]] = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="rla-ui-bench-") as tmp:
            root = Path(tmp) / "data"
            root.mkdir()
            wrote = write_db(root, size)
            written_at = time.monotonic()
            proc, url = conftest.start_server(root, env=env)
            try:
                fresh = measure(url, proc.pid, "fresh", first=True)
                fresh["since_written_s"] = time.monotonic() - written_at
                settle(root, written_at, url)
                settled = measure(url, proc.pid, "settled", first=False)
                results[size] = {
                    "write_s": wrote,
                    "fresh": fresh,
                    "settled": settled,
                    "load": os.getloadavg(),
                }
            finally:
                conftest.stop_server(proc)
        for phase in ("fresh", "settled"):
            print(
                f"{size} runs, {phase}: "
                + ", ".join(f"{k} {v:.3f}" for k, v in results[size][phase].items()),
                flush=True,
            )
    goals = {"table_warm": 1.0, "filter": 0.2, "chart": 0.5, "rss_mb": 500}
    print(
        "\n| runs | runs | table shown (first / warm) | filter redrawn (median / max of 3; request) | "
        "100x1000 chart, 5 groups, CI (first / again; request / request to drawn) | server RSS |"
    )
    print("|---|---|---|---|---|---|")
    for size, r in results.items():
        for phase in ("fresh", "settled"):
            p = r[phase]
            first = f"{p['table_cold']:.2f} s / " if "table_cold" in p else ""
            chart = (
                f"{p['chart_first'] * 1000:.0f} ms ({p['chart_first_request'] * 1000:.0f} / "
                f"{p['chart_first_request_to_drawn'] * 1000:.0f} ms) / "
                if "chart_first" in p
                else ""
            )
            print(
                f"| {size:,} | {'just written' if phase == 'fresh' else 'settled'} | {first}{p['table_warm']:.2f} s | "
                f"{p['filter'] * 1000:.0f} / {p['filter_max'] * 1000:.0f} ms ({p['filter_request'] * 1000:.0f} ms) | "
                f"{chart}{p['chart'] * 1000:.0f} ms "
                f"({p['chart_request'] * 1000:.0f} / {p['chart_request_to_drawn'] * 1000:.0f} ms) | {p['rss_mb']:.0f} MB |"
            )
    print("goals: " + ", ".join(f"{k} <= {v}" for k, v in goals.items()))
    print(f"load average after: {os.getloadavg()}")
    out = REPO / "bench" / "results" / "ui_bench.json"
    out.write_text(
        json.dumps({"results": {str(k): v for k, v in results.items()}, "cpus": os.cpu_count()}, indent=1)
    )
    print(f"raw numbers: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
