"""RLA's dashboard against TensorBoard and the MLflow UI on the same runs, in the same headless Chromium.

The data is :func:`bench.ui_bench.write_db`'s (N sweep runs of 200 points plus the ``charts``
task of 100 runs x 1,000 points in 5 groups); :mod:`bench.ui_peers_data` copies the same
scalars into TensorBoard event files and an MLflow sqlite store. Each system is measured
the same way, from ``driver.get`` to the page showing what the user asked for:

* RLA table: the runs table has rows; RLA chart: the ``charts`` task grouped by ``lr`` with
  bootstrap CI bands drawn (``body[data-charts-drawn]``), as in :mod:`bench.ui_bench`;
* TensorBoard chart: Time Series with ``runFilter=charts`` (the same 100 runs, all of them
  ticked by TensorBoard's default), the ``return`` card's chart drawn (WebGL in a worker,
  so screenshots of the card are checked, see :func:`navigate`);
* MLflow table: the experiment's run table (``.ag-row`` of a run) shown.

``cold`` = a new server process and a new browser, navigation as soon as the server answers
(each repetition restarts the server); ``warm`` = the same server and browser after
``about:blank``. Servers bind 127.0.0.1 only; only the process groups started here are ended.
Creating the MLflow store is capped (``--mlflow-budget``) above 2,000 runs: a size whose
first 5% of runs say it would take longer is reported as not measured.

    python -m bench.ui_peers --sizes 2000 10000
"""
from __future__ import annotations

import argparse
import io
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from bench.ui_bench import REPO, timed, write_db  # REPO also puts test/ui on sys.path
from bench.ui_peers_data import write_mlflow, write_tensorboard

RLA_TABLE = "return document.querySelectorAll('#runs-table tbody tr[data-index]').length > 0"
RLA_CHART = "return (document.body.dataset.chartsDrawn || '') !== ''"
MLFLOW_TABLE = ("return Array.from(document.querySelectorAll('.ag-row[row-id]'))"
                ".filter(r => !r.getAttribute('row-id').startsWith('load_more')).length > 0")
# Above a few dozen runs TensorBoard ticks none: tick the header box (all runs the filter shows).
TB_SELECT = ("var boxes = document.querySelectorAll('runs-selector input[type=checkbox], "
             "metrics-runs-selector input[type=checkbox]');"
             "if (boxes.length < 2) return false; if (!boxes[0].checked) boxes[0].click(); return true;")
TB_LOADED = ("var c = document.querySelector('scalar-card line-chart canvas, scalar-card line-chart svg.series-view');"
             "return !!c && c.clientWidth > 0 && !document.querySelector('scalar-card mat-progress-bar');")
Wait = Callable[[Any], bool]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_peer(cmd: List[str], ready: str, log: Path, limit: float = 300.0) -> subprocess.Popen:
    """``cmd`` in its own process group; returns once ``ready`` answers HTTP (any status < 500)."""
    proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(ready, timeout=2) as reply:
                if reply.status < 500:
                    return proc
        except OSError:
            time.sleep(0.1)
    stop_peer(proc)
    raise TimeoutError(f"{cmd[0]} did not answer {ready} within {limit:.0f} s")


def stop_peer(proc: subprocess.Popen) -> None:
    """End the process group this bench started (SIGTERM, then SIGKILL after 30 s)."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def tb_shot(driver: Any) -> Tuple[int, bytes]:
    """(coloured pixels, PNG) of TensorBoard's ``return`` chart, or (0, b"") before it is loaded."""
    from PIL import Image
    from selenium.webdriver.common.by import By

    if not driver.execute_script(TB_LOADED):
        return 0, b""
    png = driver.find_element(By.CSS_SELECTOR, "scalar-card line-chart").screenshot_as_png
    pixels = Image.open(io.BytesIO(png)).convert("RGB").get_flattened_data()
    return sum(1 for r, g, b in pixels if max(r, g, b) - min(r, g, b) > 60), png


def navigate(driver: Any, url: str, check: str, limit: float) -> float:
    """Seconds from ``driver.get(url)`` until the page shows what it should.

    TensorBoard's runs are ticked as soon as its run list is shown (timed, as a user's click).
    TensorBoard draws in a worker, so its chart counts as drawn at the start of the first of two
    identical screenshots of the card holding over 5,000 coloured pixels (the 100 curves; a
    half-drawn chart shows a few flat lines, and the next frame differs).
    """
    if check != "tb":
        return timed(lambda: driver.get(url), lambda: bool(driver.execute_script(check)), limit)
    start = time.perf_counter()
    driver.get(url)
    last, last_at, ticked = b"", 0.0, False
    while time.perf_counter() - start < limit:
        ticked = ticked or bool(driver.execute_script(TB_SELECT))
        at = time.perf_counter()
        coloured, png = tb_shot(driver)
        if coloured > 5000 and png == last:
            return last_at - start
        last, last_at = (png, at) if coloured > 5000 else (b"", 0.0)
        time.sleep(0.005)
    raise TimeoutError("TensorBoard did not draw the chart within the time limit")


def measure(serve: Callable[[], Tuple[Any, str]], stop: Callable[[Any], None], url_path: str, check: str,
            cold_reps: int, warm_reps: int, limit: float, shot: Optional[Path],
            probe: str = "") -> Dict[str, Any]:
    """Cold (fresh server + browser per repetition) and warm (reload) times of one page.

    ``probe`` (JavaScript, run untimed after each cold load) records what the page had then.
    """
    import browser

    cold: List[float] = []
    warm: List[float] = []
    seen: List[Any] = []
    for rep in range(cold_reps):
        proc, base = serve()
        driver = browser.start()
        try:
            cold.append(navigate(driver, base + url_path, check, limit))
            if probe:
                seen.append(driver.execute_script(probe, base))
            if rep == cold_reps - 1:
                for _ in range(warm_reps):
                    driver.get("about:blank")
                    warm.append(navigate(driver, base + url_path, check, limit))
                if shot:
                    driver.save_screenshot(str(shot))
        finally:
            driver.quit()
            stop(proc)
    return {"cold": cold, "warm": warm, "seen": seen}


def rla_server(root: Path, env: Dict[str, str]) -> Callable[[], Tuple[Any, str]]:
    import conftest  # test/ui's server starter, as bench.ui_bench uses it

    return lambda: conftest.start_server(root, env=env)


def tb_server(logdir: Path, log: Path) -> Callable[[], Tuple[Any, str]]:
    def serve() -> Tuple[Any, str]:
        port = free_port()
        proc = start_peer(["tensorboard", "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)],
                          f"http://127.0.0.1:{port}/", log)
        return proc, f"http://127.0.0.1:{port}/"
    return serve


def mlflow_server(store: Path, log: Path) -> Callable[[], Tuple[Any, str]]:
    def serve() -> Tuple[Any, str]:
        port = free_port()
        proc = start_peer(["mlflow", "ui", "--backend-store-uri", f"sqlite:///{store}", "--host", "127.0.0.1",
                           "--port", str(port)], f"http://127.0.0.1:{port}/health", log)
        return proc, f"http://127.0.0.1:{port}/"
    return serve


# TensorBoard's own list of runs right after the chart was drawn (untimed): were all 100 loaded?
TB_PROBE = ("var x = new XMLHttpRequest(); x.open('GET', arguments[0] + 'data/runs', false); x.send();"
            "return JSON.parse(x.responseText).filter(r => r.startsWith('charts/')).length;")
TB_PATH = "?runFilter=charts&tagFilter=return#timeseries"


def build(tmp: Path, size: int, mlflow_budget: float, mlflow_skip: Optional[str] = None) -> Dict[str, Any]:
    """The RLA data root, its TensorBoard and MLflow copies; what each cost."""
    root = tmp / "data"
    root.mkdir()
    info: Dict[str, Any] = {"runs": size, "rla_write_s": write_db(root, size)}
    info["tb_write_s"], info["tb_runs"] = write_tensorboard(root, tmp / "tb")
    info["mlflow_write_s"], info["mlflow_runs"] = None, 0
    if mlflow_skip:
        info["mlflow_skip"] = mlflow_skip
        return info
    try:
        import mlflow  # noqa: F401,F811
    except ImportError:
        info["mlflow_skip"] = "mlflow is not installed"
        return info
    budget = mlflow_budget if size > 2000 else float("inf")  # 2,000 runs are always measured
    info["mlflow_write_s"], info["mlflow_runs"] = write_mlflow(root, tmp / "mlflow.db", budget, size + 100)
    if info["mlflow_write_s"] is None:
        info["mlflow_skip"] = (f"creating the store would take over {mlflow_budget:.0f} s "
                               f"(extrapolated from the first {info['mlflow_runs']} runs)")
    return info


def mlflow_forecast(size: int, budget: float, results: Dict[int, Dict[str, Any]]) -> Optional[str]:
    """Why ``size`` gets no MLflow store, or None to create it.

    Sizes up to 2,000 are always created; a larger one is skipped when the rate of an earlier
    creation says it would exceed ``budget`` (otherwise :func:`write_mlflow` still probes it).
    """
    rates = [r["mlflow_write_s"] / r["mlflow_runs"] for r in results.values() if r.get("mlflow_write_s")]
    if size <= 2000 or not rates:
        return None
    forecast = max(rates) * (size + 100)
    if forecast <= budget:
        return None
    return (f"store not created: {size + 100:,} runs at the {max(rates):.2f} s/run measured at a smaller "
            f"size would take ~{forecast / 60:.0f} min, over the {budget / 60:.0f} min cap")


def attempt(label: str, fn: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """``fn()``, or ``{"error": ...}`` when the system could not show the page (the table says so)."""
    try:
        result = fn()
    except Exception as exc:  # a peer that cannot load a size is a result, not a crash
        result = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:200]}
    print(f"{label}: {json.dumps(result)}", flush=True)
    return result


def prepared(workdir: Path, size: int, args: argparse.Namespace, results: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """The data of ``workdir`` (``build.json`` says what it cost), built there first if missing."""
    saved = workdir / "build.json"
    if saved.exists():
        return json.loads(saved.read_text())
    out = build(workdir, size, args.mlflow_budget, mlflow_forecast(size, args.mlflow_budget, results))
    saved.write_text(json.dumps(out))
    return out


def run_size(size: int, args: argparse.Namespace, shots: Path, results: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """Every system on one generated database of ``size`` runs (in ``--workdir/<size>`` if given)."""
    with tempfile.TemporaryDirectory(prefix="rla-ui-peers-") as name:
        tmp = args.workdir / str(size) if args.workdir else Path(name)
        tmp.mkdir(parents=True, exist_ok=True)
        out = prepared(tmp, size, args, results)
        print(f"{size} runs written: {json.dumps(out)}", flush=True)
        reps = dict(cold_reps=args.cold_reps, warm_reps=args.warm_reps, limit=args.limit)
        rla, stop_rla = rla_server(tmp / "data", dict(os.environ, PYTHONPATH=str(REPO))), __import__("conftest").stop_server
        out["rla_table"] = attempt(f"{size} RLA table", lambda: measure(
            rla, stop_rla, "#/runs", RLA_TABLE, shot=shots / f"rla_table_{size}.png", **reps))
        out["rla_chart"] = attempt(f"{size} RLA chart", lambda: measure(
            rla, stop_rla, "#/charts?task=charts&metric=return&group=lr&band=ci", RLA_CHART,
            shot=shots / f"rla_chart_{size}.png", **reps))
        out["tb_chart"] = attempt(f"{size} TensorBoard", lambda: measure(
            tb_server(tmp / "tb", shots / "tensorboard.log"), stop_peer, TB_PATH, "tb",
            shot=shots / f"tb_chart_{size}.png", probe=TB_PROBE, **reps))
        if out.get("mlflow_skip") is None:
            from mlflow.tracking import MlflowClient
            exp = MlflowClient(tracking_uri=f"sqlite:///{tmp / 'mlflow.db'}").get_experiment_by_name("bench")
            out["mlflow_table"] = attempt(f"{size} MLflow", lambda: measure(
                mlflow_server(tmp / "mlflow.db", shots / "mlflow.log"), stop_peer,
                f"#/experiments/{exp.experiment_id}/runs", MLFLOW_TABLE, shot=shots / f"mlflow_table_{size}.png", **reps))
        return out


def spread(values: List[float]) -> str:
    """``median [min-max] (n)`` in seconds, or the median alone for one value."""
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.2f} s (1)"
    return f"{med:.2f} s [{min(values):.2f}-{max(values):.2f}] ({len(values)})"


def ratio(peer: List[float], rla: List[float]) -> str:
    return f"{statistics.median(peer) / statistics.median(rla):.1f}x" if peer and rla else "-"


def table(results: Dict[int, Dict[str, Any]]) -> str:
    """The markdown table: RLA vs each peer, cold and warm, with the peer/RLA ratio of medians."""
    lines = ["| runs | page | RLA cold | peer cold | peer/RLA | RLA warm | peer warm | peer/RLA |",
             "|---|---|---|---|---|---|---|---|"]
    pairs = (("rla_chart", "tb_chart", "chart of the 100 `charts` runs: RLA (5 groups, CI) vs TensorBoard"),
             ("rla_table", "mlflow_table", "runs table: RLA vs MLflow UI"))
    for size, r in results.items():
        for mine, peer, label in pairs:
            if peer not in r:
                lines.append(f"| {size:,} | {label} | {spread(r[mine]['cold'])} | not measured: "
                             f"{r.get('mlflow_skip', 'failed')} | - | {spread(r[mine]['warm'])} | - | - |")
                continue
            a, b = r[mine], r[peer]
            if "error" in a or "error" in b:
                lines.append(f"| {size:,} | {label} | {a.get('error') or spread(a['cold'])} | "
                             f"could not show it: {b.get('error', '-')} | - | - | - | - |")
                continue
            lines.append(f"| {size:,} | {label} | {spread(a['cold'])} | {spread(b['cold'])} | "
                         f"{ratio(b['cold'], a['cold'])} | {spread(a['warm'])} | {spread(b['warm'])} | "
                         f"{ratio(b['warm'], a['warm'])} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    from bench.common import machine_info

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--cold-reps", type=int, default=3)
    parser.add_argument("--warm-reps", type=int, default=3)
    parser.add_argument("--limit", type=float, default=300.0, help="seconds one page may take")
    parser.add_argument("--mlflow-budget", type=float, default=600.0, help="seconds to create its store")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) each size's data in <workdir>/<size>")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "ui_peers.json")
    parser.add_argument("--shots", type=Path, default=Path(tempfile.gettempdir()) / "rla-ui-peers-shots")
    args = parser.parse_args(argv)
    args.shots.mkdir(parents=True, exist_ok=True)
    results: Dict[int, Dict[str, Any]] = {}
    if args.out.exists():  # sizes measured by an earlier invocation are kept
        earlier = json.loads(args.out.read_text())
        results = {int(k): dict(v, machine=v.get("machine", earlier.get("machine"))) for k, v in earlier["results"].items()}
    for size in args.sizes:
        try:
            results[size] = run_size(size, args, args.shots, results)
            results[size]["machine"] = machine_info(("tensorboard", "mlflow", "selenium"))
        except Exception as exc:  # a size that fails is reported, the sizes before it are kept
            print(f"{size} runs: failed: {exc!r}", flush=True)
            break
        args.out.write_text(json.dumps({"results": results}, indent=1))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
