"""The original RLA's runs as RLA resume state: converted pickles, or the plain-text files.

* :func:`convert_legacy_state` (opt-in) reads ``archive_tester/<name>.pkl`` once with the
  restricted unpickler and writes RLA's JSON state ``<name>.json`` next to it (the FTP
  password and the rest of ``private_config`` are not carried over: only the public
  keys RLA's loader needs).
* :func:`state_from_text_files` needs no pickle: the hyper-parameters the query reads for
  the same run (``parameter.json``/``.yaml`` in code/, log/ or hyperparameter/, else the
  ``backup.txt`` lines) and the time-step of its newest checkpoint.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from RLA.fs import atomic_write_json, json_default
from RLA.layout import RunLayout
from RLA.loader.legacy_pickle import LegacyObject, LegacyStateError, read_legacy_pickle
from RLA.safe_read import read_bytes

#: The keys of the original's ``private_config`` kept in the converted state (no secrets).
PUBLIC_CONFIG_KEYS = ("DL_FRAMEWORK", "LOG_USED", "PROJECT_TYPE", "SEND_LOG_FILE")
MAX_PARAMETER_BYTES = 8 * 1024 * 1024


def _plain(value: Any) -> Any:
    """JSON-able copy of a rebuilt value (legacy objects become their attribute dicts)."""
    if isinstance(value, LegacyObject):
        value = value.__dict__
    elif hasattr(value, "__dict__") and type(value).__name__ == "Namespace":
        value = vars(value)
    return json.loads(json.dumps(value, default=_default, allow_nan=True))


def _default(obj: Any) -> Any:
    if isinstance(obj, LegacyObject):
        return obj.__dict__
    if isinstance(obj, (collections.deque, set, frozenset)):
        return list(obj)
    return json_default(obj)


def _time_step(tester: LegacyObject) -> int:
    custom = tester.attribute("custom_data") or {}
    if isinstance(custom, dict) and isinstance(custom.get("time-step"), int):
        return int(custom["time-step"])
    holder = tester.attribute("time_step_holder")
    if isinstance(holder, LegacyObject):
        value = holder.attribute("timesteps", 0)
        return int(value) if isinstance(value, (int, float)) else 0
    return 0


def state_from_legacy(tester: Any, layout: RunLayout) -> Dict[str, Any]:
    """RLA's JSON resume state of the original's pickled ``Tester``.

    Raises:
        LegacyStateError: the pickle does not hold a ``Tester``.
    """
    if not isinstance(tester, LegacyObject) or tester.legacy_class != "Tester":
        raise LegacyStateError(
            f"{layout.archive_tester_file.with_suffix('.pkl')} holds no Tester",
            expected="the original's pickled exp_manager",
            found=type(tester).__name__,
            fix="load the run from parameter.json / backup.txt instead",
        )
    record = [str(item) for item in tester.attribute("hyper_param_record") or []]
    config = tester.attribute("private_config") or {}
    public = {k: _plain(config[k]) for k in PUBLIC_CONFIG_KEYS if isinstance(config, dict) and k in config}
    return {
        "format_version": 1,
        "log_name_format_version": tester.attribute("log_name_format_version") or "legacy",
        "index": layout.index,
        "task_table_name": layout.task,
        "name": layout.name,
        "record_date": layout.record_date,
        "data_root": str(layout.data_root),
        "hyper_param": _plain(tester.attribute("hyper_param") or {}),
        "hyper_param_record": record,
        "tracked_keys": [item.split("=", 1)[0] for item in record],
        "custom_data": _plain(tester.attribute("custom_data") or {}),
        "time_step": _time_step(tester),
        "parent": None,
        "config": public or None,
        "converted_from": "pickle",
    }


def convert_legacy_state(layout: RunLayout, overwrite: bool = False) -> Optional[Path]:
    """Write ``<name>.json`` from the run's ``<name>.pkl``; returns it (None: nothing to convert).

    An existing JSON state is kept unless ``overwrite``. The pickle itself is left in place.

    Raises:
        LegacyStateError: the pickle is refused or damaged.
    """
    target = layout.archive_tester_file
    source = target.with_suffix(".pkl")
    if not source.is_file() or (target.exists() and not overwrite):
        return None
    atomic_write_json(target, state_from_legacy(read_legacy_pickle(source), layout), durable=False)
    return target


def _parameter_files(layout: RunLayout) -> List[Path]:
    hyper = layout.type_root("hyperparameter") / layout.task / layout.date / layout.name
    return [
        folder / f"parameter.{ext}"
        for folder in (layout.code_dir, layout.log_dir, hyper)
        for ext in ("json", "yaml")
    ]


def params_from_text_files(layout: RunLayout) -> Optional[Dict[str, Any]]:
    """The run's hyper-parameters from ``parameter.json``/``.yaml`` or ``backup.txt`` (None: none)."""
    import yaml

    from RLA.query.records import _params_from_backup

    for path in _parameter_files(layout):
        if not path.is_file():
            continue
        text = read_bytes(path, MAX_PARAMETER_BYTES).decode("utf-8", errors="replace")
        try:
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and data:
            data.pop("formatted_log_name", None)  # added by PrettyPlotterTool, not a parameter
            return data
    backup = layout.log_dir / "backup.txt"
    if backup.is_file():
        params = _params_from_backup(backup)
        return params or None
    return None


def state_from_text_files(layout: RunLayout) -> Optional[Dict[str, Any]]:
    """A resume state built from the plain-text files (None when they hold no hyper-parameters)."""
    params = params_from_text_files(layout)
    if params is None:
        return None
    from RLA.naming import parse_run_name

    parsed = parse_run_name(layout.name)
    return {
        "hyper_param": params,
        "hyper_param_record": [],
        "custom_data": {},
        "tracked_keys": [k for k, _ in parsed.params] if parsed else [],
        "time_step": 0,
        "config": None,
        "index": layout.index,
        "converted_from": "text",
    }


__all__ = [
    "convert_legacy_state",
    "state_from_legacy",
    "params_from_text_files",
    "state_from_text_files",
    "PUBLIC_CONFIG_KEYS",
]
