"""Build small databases in the original RLA's on-disk formats (both repositories).

Runs are written the way the original wrote them: ``log/`` (progress.csv with a
``time-step`` column, log.txt, warn.txt, backup.txt lines of ``print_args``, a
``progress-[...].csv`` side file of ``plot_util.load_results``), ``code/`` (parameter.json),
``checkpoint/`` (``checkpoint-<N>.pt`` or polixir's ``checkpoint_<N>.pt``, plain
``torch.save``), ``results/`` and ``archive_tester/<name>.pkl``: a pickle of stand-in
classes carrying the original's names (``RLA.easy_log.tester.Tester``), written with a
pickler that names those globals without importing them.
"""
from __future__ import annotations

import collections
import datetime as dt
import io
import json
import pickle
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

TASK = "demo_task"


class _LegacyPickler(pickle._Pickler):  # type: ignore[misc,name-defined]
    """Writes classes that carry ``_legacy_global`` under that (module, name)."""

    def save_global(self, obj: Any, name: Optional[str] = None) -> None:
        target = getattr(obj, "_legacy_global", None) if isinstance(obj, type) else None
        if target is None:
            return super().save_global(obj, name)
        module, qualname = target
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)


class StandInTimeStepHolder:
    _legacy_global = ("RLA.easy_log.time_step", "TimeStepHolder")

    def __init__(self, time: int) -> None:
        self._TimeStepHolder__timesteps = time
        self._TimeStepHolder__outer_epoch = 0
        self.tf_log = False


class StandInTester:
    """The attributes of the original ``Tester`` that its pickles hold."""

    _legacy_global = ("RLA.easy_log.tester", "Tester")

    def __init__(self, hp: Dict[str, Any], record: List[str], step: int, root: Path, name: str,
                 password: str) -> None:
        self._Tester__custom_recorder = {}
        self._Tester__ipaddr = "10.0.0.1"
        self.custom_data = {"time-step": step, "best": collections.deque([1.0, 2.0], maxlen=5)}
        self.time_step_holder = StandInTimeStepHolder(step)
        self.hyper_param = hp
        self.hyper_param_record = record
        self.private_config = {"DL_FRAMEWORK": "torch", "LOG_USED": ["stdout", "csv"],
                               "REMOTE_SETTING": {"ftp_server": "10.0.0.9", "username": "me", "password": password}}
        self.record_date = dt.datetime(2022, 3, 1, 21, 13, 3, 230208)
        self.task_table_name = TASK
        self.data_root = str(root)
        self.log_dir = f"{root}/log/{TASK}/2022/03/01/{name}/"
        self.saver = None
        self.writer = None
        self.dl_framework = "torch"
        self.checkpoint_keep_list = [step]
        self.log_name_format_version = "v1"


def legacy_pickle(obj: Any, protocol: int = 4) -> bytes:
    buffer = io.BytesIO()
    _LegacyPickler(buffer, protocol=protocol).dump(obj)
    return buffer.getvalue()


def write_run(root: Path, name: str, params: Dict[str, Any], steps: Sequence[int], date: str = "2022/03/01",
              checkpoints: Sequence[Tuple[str, int]] = (), pickle_protocol: Optional[int] = 4,
              parameter_json: bool = False, backup: bool = True, task: str = TASK,
              password: str = "hunter2-secret") -> Dict[str, Path]:
    """One run of the original; returns its data-type paths."""
    rel = Path(task) / date / name
    paths = {kind: root / kind / rel for kind in ("log", "code", "checkpoint", "results")}
    for path in paths.values():
        path.mkdir(parents=True, exist_ok=True)
    log = paths["log"]
    rows = ["perf/mse,time-step,y_out"] + [f"{1.0 / (s + 1)},{s},{s * 2.0}" for s in steps]
    (log / "progress.csv").write_text("\n".join(rows) + "\n")
    (log / "progress-[||perf--mse||, ||time-step||].csv").write_text("perf/mse,time-step\n0.5,1\n")
    (log / "log.txt").write_text(f"Logging to {log}/\n")
    (log / "warn.txt").write_text("")
    lines = [f"[BACKUP] 0 : key: {k}, value: {v}" for k, v in sorted(params.items())]
    (log / "backup.txt").write_text("\n".join(lines) + "\n" if backup else "")
    if parameter_json:
        (paths["code"] / "parameter.json").write_text(json.dumps(params, sort_keys=True, indent=4))
    (paths["results"] / f"{steps[-1] if steps else 0}-react_func.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    for stem, step in checkpoints:
        import torch
        torch.save({"policy": {"w": torch.full((2,), float(step))}}, paths["checkpoint"] / f"{stem}{step}.pt")
    if pickle_protocol is not None:
        pkl = root / "archive_tester" / task / date / f"{name}.pkl"
        pkl.parent.mkdir(parents=True, exist_ok=True)
        record = [f"{k}={params[k]}" for k in sorted(params)[:1]]
        tester = StandInTester(params, record, steps[-1] if steps else 0, root, name, password)
        pkl.write_bytes(legacy_pickle(tester, pickle_protocol))
        paths["archive_tester"] = pkl
    return paths


#: Names of both formats: V1 (``_``), legacy (spaces), no tracked parameter (``_&``).
V1_NAME = "21-13-03-230208_11.0.91.89_&learning_rate=0.001"
LEGACY_NAME = "21-13-05-000001 11.0.91.89 &env_id=Test-v1&learning_rate=0.0001"
BARE_NAME = "21-20-00-000002_11.0.91.89_&"


def build_database(root: Path) -> Dict[str, Dict[str, Path]]:
    """Three runs of 2022/03/01 (two at 21-13, one short) and one of polixir's on 2022/11/24."""
    return {
        "v1": write_run(root, V1_NAME, {"learning_rate": 0.001, "seed": 0}, [0, 10, 20],
                        checkpoints=[("checkpoint-", 10), ("checkpoint-", 20)]),
        "legacy": write_run(root, LEGACY_NAME, {"env_id": "Test-v1", "learning_rate": 0.0001, "seed": 1},
                            [0, 10, 30], pickle_protocol=2, parameter_json=True),
        "bare": write_run(root, BARE_NAME, {"seed": 2}, [0, 1], checkpoints=[("checkpoint_", 1)]),
        "polixir": write_run(root, "10-00-00-000003_11.0.91.89_&learning_rate=0.01", {"learning_rate": 0.01},
                             [0, 50, 100], date="2022/11/24",
                             checkpoints=[("checkpoint_", 50), ("checkpoint_", 100), ("best_", 60)]),
    }
