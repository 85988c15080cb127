"""Read a run's logged scalars back as pandas DataFrames (progress.csv, progress.json, tb/)."""
from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List

from RLA.errors import BackendNotInstalledError, LoggerError


def _pandas() -> Any:
    import pandas
    return pandas


def complete_lines(fname: Any) -> bytes:
    """The file's bytes up to its last newline (a torn last line is left out)."""
    with open(fname, "rb") as handle:
        data = handle.read()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    return data


def read_progress_csv(fname: Any, **kwargs: Any) -> Any:
    """``progress.csv`` as a DataFrame, without a torn last line.

    A process killed while appending can leave a last line without its newline (a write of
    a row cut at a page boundary); that row was never acknowledged and may hold truncated
    values, so readers drop it. The writer repairs the file when it reopens it.
    """
    import io

    data = complete_lines(fname)
    if not data.strip():
        raise _pandas().errors.EmptyDataError(f"{fname}: no complete line")
    return _pandas().read_csv(io.BytesIO(data), **kwargs)


def read_csv(fname: str) -> Any:
    """``progress.csv`` as a DataFrame (empty cells are NaN; a torn last line is ignored)."""
    return read_progress_csv(fname, sep=",")


def read_json(fname: str) -> Any:
    """``progress.json`` (one object per line) as a DataFrame; a torn last line is ignored."""
    rows: List[Dict[str, Any]] = []
    with open(fname, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                break  # partial line written by a killed process
            if line.strip():
                rows.append(json.loads(line))
    return _pandas().DataFrame(rows)


def read_tb(path: str) -> Any:
    """TensorBoard scalars under ``path`` (a tb/ dir or one event file) as a DataFrame.

    One row per step, one column per tag, read with TensorBoard's own event reader.
    """
    try:
        from tensorboard.backend.event_processing.event_accumulator import (
            SCALARS, EventAccumulator)
    except ImportError as exc:
        raise BackendNotInstalledError("read_tb needs the tensorboard package",
                                       expected="tensorboard importable", found=str(exc),
                                       fix="pip install tensorboard") from exc
    if not os.path.exists(path):
        raise LoggerError("No TensorBoard events to read", expected="a tb/ directory or event file",
                          found=f"{path} does not exist", fix="check the run's log directory")
    acc = EventAccumulator(path, size_guidance={SCALARS: 0})
    acc.Reload()
    table: Dict[int, Dict[str, float]] = {}
    for tag in acc.Tags().get("scalars", []):
        for event in acc.Scalars(tag):
            table.setdefault(event.step, {})[tag] = event.value
    pandas = _pandas()
    frame = pandas.DataFrame.from_dict(table, orient="index").sort_index()
    frame.index.name = "step"
    return frame.fillna(math.nan)
