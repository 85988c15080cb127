"""The dashboard bench's runs, copied for the peers: TensorBoard event files and an MLflow sqlite store.

Both are written from the ``progress.csv`` and ``run.json`` files that
:func:`bench.ui_bench.write_db` left under ``<root>/log`` (the fixture writes no ``tb/``
folders), so every system shows the same runs with the same scalars.
"""
from __future__ import annotations

import csv
import json
import logging
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

Run = Tuple[str, Dict[str, Any], List[int], List[float]]


def read_runs(root: Path) -> Iterator[Run]:
    """``(relative run dir, hyper-parameters, steps, returns)`` of every run under ``root/log``."""
    log = root / "log"
    for progress in sorted(log.rglob("progress.csv")):
        info = json.loads((progress.parent / "run.json").read_text(encoding="utf-8"))
        steps: List[int] = []
        values: List[float] = []
        with progress.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                steps.append(int(float(row["time-step"])))
                values.append(float(row["return"]))
        yield str(progress.parent.relative_to(log)), dict(info["hyper_params"], task=info["task"]), steps, values


def write_tensorboard(root: Path, out: Path) -> Tuple[float, int]:
    """One event file per run under ``out/<task>/<date>/<name>``; returns (seconds, runs).

    The records are the ones ``SummaryWriter.add_scalar`` writes (simple_value summaries after
    a ``brain.Event:2`` header), framed by tensorboardX's own TFRecord writer; building them
    directly is ~10x faster than a SummaryWriter (and its thread) per run.
    """
    from tensorboardX.proto.event_pb2 import Event
    from tensorboardX.proto.summary_pb2 import Summary
    from tensorboardX.record_writer import RecordWriter

    start, count = time.perf_counter(), 0
    for rel, _params, steps, values in read_runs(root):
        folder = out / rel
        folder.mkdir(parents=True, exist_ok=True)
        writer = RecordWriter(str(folder / "events.out.tfevents.1800000000.bench"))
        writer.write(Event(wall_time=1_800_000_000.0, file_version="brain.Event:2").SerializeToString())
        for step, value in zip(steps, values):
            summary = Summary(value=[Summary.Value(tag="return", simple_value=value)])
            writer.write(Event(wall_time=1_800_000_000 + step / 1000, step=step, summary=summary).SerializeToString())
        writer.close()
        count += 1
    return time.perf_counter() - start, count


def write_mlflow(root: Path, store: Path, budget_s: float, expected: int) -> Tuple[Optional[float], int]:
    """The same runs in one MLflow experiment ``bench`` (sqlite); ``(seconds or None, runs)``.

    Stops early and returns ``None`` seconds when the first 5% of the runs say that all of
    them would take longer than ``budget_s``.
    """
    logging.disable(logging.WARNING)
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store}")
    exp = client.create_experiment("bench", artifact_location=str(store.parent / "mlartifacts"))
    start, count, probe = time.perf_counter(), 0, min(expected, max(50, expected // 20))
    for rel, params, steps, values in read_runs(root):
        run = client.create_run(exp, run_name=rel.rsplit("/", 1)[-1][:250], tags={"task": params["task"]})
        metrics = [Metric("return", v, 1_800_000_000_000 + s, s) for s, v in zip(steps, values)]
        plain = [Param(k, str(v)) for k, v in params.items() if k != "task"]
        for lo in range(0, len(metrics), 900):
            client.log_batch(run.info.run_id, metrics=metrics[lo:lo + 900], params=plain if lo == 0 else [],
                             tags=[RunTag("rla.dir", rel)] if lo == 0 else [])
        client.set_terminated(run.info.run_id)
        count += 1
        if count == probe and (time.perf_counter() - start) * expected / probe > budget_s:
            return None, count
    return time.perf_counter() - start, count
