"""MLflow's side of :mod:`bench.query_scale`: the same runs and the same selective filter.

The runs (the hyper-parameters of :func:`bench.query_corpus.params_of` and the same 50-point
curve) go into MLflow's sqlite store; the query is ``search_runs`` with
``params.env = 'Hopper' and params.algo = 'sac' and params.lr = '0.001'`` (MLflow stores
params as text, so ``seed < 5`` is applied to the result in pandas, as a user would), in a
fresh process per repetition, like RLA's CLI queries.
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

from bench.query_corpus import MATCHES, POINTS, params_of

_QUERY = """
import logging, sys, time
logging.disable(logging.WARNING)
import mlflow
uri = "sqlite:///" + sys.argv[1]
start = time.perf_counter()
mlflow.set_tracking_uri(uri)
frame = mlflow.search_runs(experiment_names=["bench"], max_results=100000,
    filter_string="params.env = 'Hopper' and params.algo = 'sac' and params.lr = '0.001'")
frame = frame[frame["params.seed"].astype(int) < 5]
print(len(frame))
"""


def create(store: Path, size: int) -> float:
    """Write runs into the sqlite store until it holds ``size``; returns seconds spent.

    Resumable: run ``i`` is the ``i``-th run that has its params, so a creation stopped
    half-way (a long one runs in the background, nice'd) continues where it stopped.
    """
    import logging
    import sqlite3

    logging.disable(logging.WARNING)
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store}")
    found = client.get_experiment_by_name("bench")
    exp = (
        found.experiment_id
        if found
        else client.create_experiment("bench", artifact_location=str(store.parent / "artifacts"))
    )
    with sqlite3.connect(store) as db:
        done = db.execute("SELECT COUNT(DISTINCT run_uuid) FROM params").fetchone()[0]
    start = time.perf_counter()
    for i in range(done, size):
        run = client.create_run(exp)
        now = int(time.time() * 1000)
        metrics = [
            Metric("return", round(math.sin(k / 7 + i) * 10 + k, 3), now, k * 1000) for k in range(POINTS)
        ]
        client.log_batch(
            run.info.run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params_of(i).items()]
        )
        client.set_terminated(run.info.run_id)
        if i % 100 == 0:
            print(f"{i} runs, {time.perf_counter() - start:.0f}s", flush=True)
    return time.perf_counter() - start


def stored(store: Path) -> int:
    """Runs of the store that have their params (the size reached)."""
    import sqlite3

    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT COUNT(DISTINCT run_uuid) FROM params").fetchone()[0])


def measure(folder: Path, size: int, reps: int = 5) -> Dict[str, Any]:
    """``{create_s, query_s (median, fresh process incl. import), matches}``."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "mlflow.db"
    out: Dict[str, Any] = {"runs": size}
    if not store.exists() or stored(store) < size:
        out["create_s"] = create(store, size)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", _QUERY, str(store)],
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
        times.append(time.perf_counter() - start)
        assert int(result.stdout.strip().splitlines()[-1]) == MATCHES, result.stdout
    out["query_s"] = statistics.median(times)
    out["query_range_s"] = [min(times), max(times)]
    out["stored_runs"] = stored(store)
    return out


if __name__ == "__main__":
    # Fill (or finish filling) the store in the background: python -m bench.query_mlflow DIR RUNS
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    print(f"created in {create(folder / 'mlflow.db', int(sys.argv[2])):.0f}s")
