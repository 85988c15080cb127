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
    """Write ``size`` runs into a new sqlite store; returns seconds spent."""
    import logging

    logging.disable(logging.WARNING)
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store}")
    exp = client.create_experiment("bench", artifact_location=str(store.parent / "artifacts"))
    start = time.perf_counter()
    for i in range(size):
        run = client.create_run(exp)
        now = int(time.time() * 1000)
        metrics = [Metric("return", round(math.sin(k / 7 + i) * 10 + k, 3), now, k * 1000) for k in range(POINTS)]
        client.log_batch(run.info.run_id, metrics=metrics,
                         params=[Param(k, str(v)) for k, v in params_of(i).items()])
        client.set_terminated(run.info.run_id)
    return time.perf_counter() - start


def measure(folder: Path, size: int, reps: int = 5) -> Dict[str, Any]:
    """``{create_s, query_s (median, fresh process incl. import), matches}``."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "mlflow.db"
    out: Dict[str, Any] = {"runs": size}
    if not store.exists():
        out["create_s"] = create(store, size)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-c", _QUERY, str(store)], capture_output=True, text=True,
                                check=True, timeout=3600)
        times.append(time.perf_counter() - start)
        assert int(result.stdout.strip().splitlines()[-1]) == MATCHES, result.stdout
    out["query_s"] = statistics.median(times)
    return out
