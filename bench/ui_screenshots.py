"""Screenshots of the dashboard's pages for the README, taken in Debian's headless Chromium.

Starts ``rla ui`` on a data root (e.g. the DQN sweep's, ``example/dqn_cartpole/sweep.py``),
opens each page, waits until it has drawn, and saves a PNG per page::

    python -m bench.ui_screenshots --data-root ./data --task dqn_cartpole --metric eval/return \\
        --group lr --out docs/images
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "ui"))
WAIT_S = 60.0


def wait(driver: Any, check: Callable[[Any], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check(driver):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not show within {WAIT_S:.0f} s")
        time.sleep(0.1)


def js(script: str) -> Callable[[Any], Any]:
    return lambda driver: driver.execute_script(script)


def shoot(
    driver: Any, url: str, ready: Callable[[Any], Any], out: Path, height: Optional[int] = None
) -> None:
    """Open ``url``, wait for ``ready``, and save the page (its full height, or ``height``)."""
    driver.get("about:blank")
    driver.get(url)
    wait(driver, ready, out.name)
    time.sleep(0.5)  # let fonts and images settle
    full = height or driver.execute_script("return document.documentElement.scrollHeight")
    chrome = driver.get_window_size()["height"] - driver.execute_script("return window.innerHeight")
    driver.set_window_size(1400, min(max(int(full), 600), 3000) + chrome)
    time.sleep(0.5)
    driver.save_screenshot(str(out))
    driver.set_window_size(1400, 900)
    print(f"wrote {out}", flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    import browser  # type: ignore[import-not-found]  # test/ui helpers, put on sys.path above
    import conftest  # type: ignore[import-not-found]

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--metric", required=True)
    parser.add_argument("--group", default="lr")
    parser.add_argument("--run", default=None, help="the run page to show (default: the first run)")
    parser.add_argument("--columns", default="index,status,start_time,lr,seed")
    parser.add_argument("--out", default=str(REPO / "docs" / "images"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    proc, url = conftest.start_server(Path(args.data_root), env=dict(os.environ))
    driver = browser.start()
    try:
        columns = args.columns.split(",") + [f"last({args.metric})", f"max({args.metric})"]
        runs = (
            url
            + "#/runs?"
            + urllib.parse.urlencode({"task": args.task, "column": columns, "sort": args.group}, doseq=True)
        )
        rows = js("return document.querySelectorAll('#runs-table tbody tr[data-index]').length > 0")
        shoot(driver, runs, rows, out / "dashboard-runs.png")
        run = args.run or driver.execute_script(
            "return document.querySelector('#runs-table tbody tr').dataset.index"
        )
        pair = driver.execute_script(
            "return Array.from(document.querySelectorAll('#runs-table tbody tr')).slice(0, 2).map(function (r) { return r.dataset.index; });"
        )
        bad = (
            url
            + "#/runs?"
            + urllib.parse.urlencode({"task": args.task, "where": f"{args.group} >= 5e-4 and sed > 0"})
        )
        shoot(
            driver,
            bad,
            js("return !!document.querySelector('#where-error pre.caret')"),
            out / "dashboard-filter-error.png",
            500,
        )
        chart = (
            url
            + "#/charts?"
            + urllib.parse.urlencode(
                {
                    "task": args.task,
                    "metric": args.metric,
                    "group": args.group,
                    "band": "ci",
                    "individual": "1",
                }
            )
        )
        shoot(driver, chart, js("return !!document.body.dataset.chartsDrawn"), out / "dashboard-charts.png")
        images = js(
            "var i = document.querySelectorAll('#media img'); return i.length > 0 && "
            "Array.from(i).every(function (x) { return x.complete && x.naturalWidth > 0; }) && "
            "!!document.getElementById('git-diff');"
        )
        shoot(driver, url + "#/run/" + run, images, out / "dashboard-run.png", 1850)
        compare = url + "#/compare?" + urllib.parse.urlencode({"run": pair}, doseq=True)
        shoot(
            driver,
            compare,
            js("return !!document.getElementById('compare-table')"),
            out / "dashboard-compare.png",
        )
    finally:
        driver.quit()
        conftest.stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
