"""Test helper: write runs straight into a data root (current, synced and legacy layouts).

Used by the query, CLI and plot tests and by ``bench/bench_query.py``; other areas may
reuse :func:`make_run` to build fixtures without starting an experiment manager.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import os
import socket
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from RLA.fs import atomic_write_json
from RLA.layout import ARCHIVE_TESTER, CODE, LOG, RunLayout
from RLA.naming import format_run_name, sanitize_value

_counter = itertools.count()
_BASE = _dt.datetime(2026, 11, 2, 10, 0, 0)


def next_time() -> _dt.datetime:
    """Distinct start times, one second apart, for fixtures that do not care."""
    return _BASE + _dt.timedelta(seconds=next(_counter))


def write_progress(
    path: Path, curves: Mapping[str, Sequence[Any]], steps: Optional[Sequence[Any]] = None
) -> None:
    """Write a ``progress.csv`` with the given metric columns plus ``time-step``/``timestamp``."""
    length = max((len(v) for v in curves.values()), default=0)
    steps = list(steps) if steps is not None else list(range(length))
    keys = sorted(curves)
    lines = [",".join(keys + ["time-step", "timestamp"])]
    for i in range(length):
        cells = []
        for key in keys:
            values = curves[key]
            value = values[i] if i < len(values) else ""
            cells.append(
                "" if value is None else repr(float(value)) if isinstance(value, float) else str(value)
            )
        lines.append(",".join(cells + [str(steps[i]), f"{1.8e9 + i:.3f}"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_run(
    data_root: os.PathLike,
    task: str = "demo",
    params: Optional[Dict[str, Any]] = None,
    tracked: Optional[Sequence[str]] = None,
    curves: Optional[Mapping[str, Sequence[Any]]] = None,
    steps: Optional[Sequence[Any]] = None,
    when: Optional[_dt.datetime] = None,
    status: str = "finished",
    ip: str = "10.0.0.1",
    style: str = "current",
    host: Optional[str] = None,
    archived: bool = False,
    types: Sequence[str] = (LOG, CODE),
) -> RunLayout:
    """Create one run on disk and return its layout.

    Args:
        data_root: database root.
        task: task name.
        params: hyper-parameters (nested dicts allowed).
        tracked: keys shown in the name (default: every top-level key, sorted).
        curves: ``{metric: values}`` written to ``progress.csv`` (none: no progress file).
        steps: time-steps of the rows (default 0, 1, 2, ...).
        when: start time (default: a fresh distinct time).
        status: ``run.json`` status (``finished``, ``running``, ``crashed``, ``killed``).
        style: ``current`` (run.json + parameter.json), ``synced`` (logs only: run.json, no
            code), ``original`` (the original project: space-separated legacy name, no
            run.json, parameter.json + backup.txt), ``backup`` (no run.json, no
            parameter.json: backup.txt only) or ``name`` (nothing but the name).
        archived: create it under ``arc/``.
        types: extra empty data-type directories to create (``checkpoint``, ``results`` ...).
    """
    params = dict(params or {})
    when = when or next_time()
    tracked = list(tracked) if tracked is not None else sorted(params)
    name = _run_name(when, ip, params, tracked, style)
    layout = RunLayout(Path(data_root), task, when.strftime("%Y/%m/%d"), name, archived)
    for data_type in types:
        if data_type != ARCHIVE_TESTER:
            layout.path(data_type).mkdir(parents=True, exist_ok=True)
    layout.log_dir.mkdir(parents=True, exist_ok=True)
    if style in ("current", "synced"):
        _write_run_json(layout, params, tracked, when, status, ip, host)
    _write_params(layout, params, style)
    if ARCHIVE_TESTER in types:
        atomic_write_json(
            layout.archive_tester_file,
            {"hyper_param": params, "tracked_keys": tracked, "custom_data": {}, "time_step": 0},
            durable=False,
        )
    if curves is not None:
        write_progress(layout.log_dir / "progress.csv", curves, steps)
    return layout


def _run_name(when: _dt.datetime, ip: str, params: Dict[str, Any], tracked: List[str], style: str) -> str:
    """The run's folder name: the current format, or the original's space-separated one."""
    if style == "original":
        return f"{when.strftime('%H-%M-%S-%f')} {ip} &" + "&".join(
            f"{k}={sanitize_value(params.get(k))}" for k in tracked
        )
    return format_run_name(when, ip, [(k, params.get(k)) for k in tracked])


def _write_params(layout: RunLayout, params: Dict[str, Any], style: str) -> None:
    """Write the hyper-parameters where ``style`` keeps them: ``parameter.json`` and/or ``backup.txt``."""
    if style in ("current", "original"):
        layout.code_dir.mkdir(parents=True, exist_ok=True)
        (layout.code_dir / "parameter.json").write_text(
            json.dumps(params, sort_keys=True, indent=4), encoding="utf-8"
        )
    if style in ("original", "backup"):
        lines = [f"[BACKUP] 0 : key: {k}, value: {v}" for k, v in sorted(params.items())]
        (layout.log_dir / "backup.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_run_json(
    layout: RunLayout,
    params: Dict[str, Any],
    tracked: List[str],
    when: _dt.datetime,
    status: str,
    ip: str,
    host: Optional[str],
) -> None:
    """Write the run's ``run.json`` (a ``running`` run gets a fresh heartbeat and this process's pid)."""
    start = when.astimezone().isoformat(timespec="microseconds")
    info = {
        "format_version": 1,
        "index": layout.index,
        "task": layout.task,
        "name": layout.name,
        "date": layout.date,
        "record_date": layout.record_date,
        "hyper_params": params,
        "tracked_keys": tracked,
        "host": host or socket.gethostname(),
        "ip": ip,
        "pid": 1,
        "start_time": start,
        "status": status,
        "heartbeat": start,
        "heartbeat_interval": 30.0,
        "end_time": None if status == "running" else start,
        "parent": None,
        "git": {"commit": "0" * 40, "branch": "main", "dirty": False},
    }
    if status == "running":
        info["heartbeat"] = _dt.datetime.now().astimezone().isoformat(timespec="microseconds")
        info["pid"] = os.getpid()
    atomic_write_json(layout.log_dir / "run.json", info, durable=False)


def _edit_info(**fields: Any) -> Callable[[RunLayout], None]:
    def edit(layout: RunLayout) -> None:
        path = layout.log_dir / "run.json"
        info = json.loads(path.read_text(encoding="utf-8"))
        info.update(fields)
        path.write_text(json.dumps(info), encoding="utf-8")

    return edit


def _replace(name: str, make: Callable[[Path], object], where: str = "log") -> Callable[[RunLayout], None]:
    def edit(layout: RunLayout) -> None:
        path = (layout.log_dir if where == "log" else layout.code_dir) / name
        if path.exists() or path.is_symlink():
            path.unlink()
        make(path)

    return edit


_DEEP = b"[" * 100_000 + b"]" * 100_000


#: Damaged or crafted runs, by name: ``(how the run is damaged, text its reason contains)``.
#: Each is a run a pull could bring; every reader must skip and report it.
def _legacy_deep_parameters(layout: RunLayout) -> None:
    """A run of the original project (no run.json) whose parameter.json nests 100,000 deep."""
    os.unlink(layout.log_dir / "run.json")
    _replace("parameter.json", lambda p: p.write_bytes(_DEEP), "code")(layout)


CRAFTED: Dict[str, Tuple[Callable[[RunLayout], None], str]] = {
    "run_json_100k_deep": (_replace("run.json", lambda p: p.write_bytes(_DEEP)), "nested more than"),
    # a run of the original project (no run.json): its hyper-parameters come from parameter.json
    "parameter_json_100k_deep": (_legacy_deep_parameters, "parameter.json"),
    "heartbeat_int": (_edit_info(heartbeat=5, status="running"), "'heartbeat'"),
    "interval_soon": (_edit_info(heartbeat_interval="soon", status="running"), "'heartbeat_interval'"),
    "pid_2_70": (_edit_info(pid=2**70, status="running"), "'pid'"),
    "start_time_int": (_edit_info(start_time=5), "'start_time'"),
    "end_time_list": (_edit_info(end_time=[1]), "'end_time'"),
    "status_int": (_edit_info(status=3), "'status'"),
    "hyper_params_list": (_edit_info(hyper_params=[1, 2]), "'hyper_params'"),
    "run_json_5000_digits": (
        _replace("run.json", lambda p: p.write_text('{"pid": ' + "7" * 5000 + "}")),
        "not valid JSON",
    ),
    "run_json_binary": (_replace("run.json", lambda p: p.write_bytes(b"\x00\xff\xfe{" * 64)), "binary"),
    "run_json_symlink_passwd": (_replace("run.json", lambda p: p.symlink_to("/etc/passwd")), "symbolic link"),
    "run_json_fifo": (_replace("run.json", lambda p: os.mkfifo(p)), "FIFO"),
    "progress_fifo": (_replace("progress.csv", lambda p: os.mkfifo(p)), "FIFO"),
    "progress_directory": (_replace("progress.csv", lambda p: p.mkdir()), "directory"),
    "progress_200kB_cell": (
        _replace(
            "progress.csv", lambda p: p.write_text("return,time-step\n1.0,0\n" + "x" * 200_000 + ",1\n")
        ),
        "200000 characters",
    ),
    "progress_symlink_zero": (_replace("progress.csv", lambda p: p.symlink_to("/dev/zero")), "symbolic link"),
    "progress_binary": (
        _replace("progress.csv", lambda p: p.write_bytes(b"return,time-step\n\x00\x01,2\n")),
        "binary",
    ),
    "hyper_params_10001": (
        _edit_info(hyper_params={f"k{i}": i for i in range(10_001)}),
        "10001 hyper-parameters",
    ),
    "progress_10001_columns": (
        _replace(
            "progress.csv",
            lambda p: p.write_text(
                ",".join(f"c{i}" for i in range(10_000)) + ",time-step\n" + ",".join(["1"] * 10_001) + "\n"
            ),
        ),
        "10001 columns",
    ),
}


def make_crafted_runs(
    data_root: os.PathLike, task: str = "crafted", names: Optional[Sequence[str]] = None
) -> Tuple[List[RunLayout], Dict[str, RunLayout]]:
    """Three good runs and one damaged run per :data:`CRAFTED` entry, all in ``task``.

    The good runs log ``return`` and have ``kind='good'``; the damaged ones ``kind=<name>``.

    Returns:
        ``(good runs, {name: damaged run})``.
    """
    good = [
        make_run(data_root, task=task, params={"kind": "good", "seed": i}, curves={"return": [0.0, 1.0 + i]})
        for i in range(3)
    ]
    bad: Dict[str, RunLayout] = {}
    for name in names if names is not None else list(CRAFTED):
        layout = make_run(
            data_root,
            task=task,
            params={"kind": name, "seed": 0},
            curves={"return": [0.0, 2.0]},
            tracked=["seed"],
        )
        CRAFTED[name][0](layout)
        bad[name] = layout
    return good, bad


def age_tree(root: Union[str, os.PathLike], seconds_ago: Optional[float] = None) -> None:
    """Set every file and folder under ``root`` (the index file aside) to an old mtime.

    Runs then count as settled and listings as trusted, as in a database left alone for a while.
    The default age is ten settle periods (:data:`RLA.query.warm.SETTLE_S`).
    """
    import time

    from RLA.query.warm import SETTLE_S

    when = time.time() - (10 * SETTLE_S if seconds_ago is None else seconds_ago)
    for dirpath, _, filenames in os.walk(os.fspath(root), topdown=False):
        for name in filenames:
            if not name.startswith(".rla_index"):
                os.utime(os.path.join(dirpath, name), (when, when))
        os.utime(dirpath, (when, when))
