"""A run's resume state (``archive_tester/.../<name>.json``) and the custom data it carries."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from RLA.errors import ConfigError
from RLA.fs import atomic_write_json, read_json
from RLA.layout import RunLayout
from RLA.logger.time_step import time_step_holder
from RLA.manager.hyper_params import jsonable
from RLA.redaction import RedactionPolicy

STATE_FORMAT_VERSION = 1
#: The parts of the state whose secrets are found by key as well as by value.
_BY_KEY = ("hyper_param", "custom_data", "bookkeeping")


def build_state(
    layout: RunLayout,
    data_root: Optional[Path],
    hyper_params: Dict[str, Any],
    bookkeeping: Dict[str, Any],
    tracked: List[str],
    custom_data: Mapping[str, Any],
    parent: Optional[str],
    config: Optional[Dict[str, Any]],
    policy: RedactionPolicy,
) -> Dict[str, Any]:
    """What a later process needs to resume or fork the run (no secrets, no pickle)."""
    state = {
        "format_version": STATE_FORMAT_VERSION,
        "log_name_format_version": "v1",
        "index": layout.index,
        "task_table_name": layout.task,
        "name": layout.name,
        "record_date": layout.record_date,
        "data_root": str(data_root),
        "hyper_param": hyper_params,
        "bookkeeping": bookkeeping,
        "hyper_param_record": list(tracked),
        "tracked_keys": list(tracked),
        "custom_data": jsonable(dict(custom_data)),
        "time_step": time_step_holder.get_time(),
        "parent": parent,
        "config": config,
    }
    return {key: policy.redact_mapping(value, by_key=key in _BY_KEY) for key, value in state.items()}


def write_state(layout: RunLayout, state: Dict[str, Any]) -> None:
    """Rewrite the run's resume state atomically (a reader sees the old or the new file)."""
    atomic_write_json(layout.archive_tester_file, state, durable=False)


def read_custom_data(layout: RunLayout) -> Dict[str, Any]:
    """The custom data of the run's resume state (empty without one)."""
    state = read_json(layout.archive_tester_file) if layout.archive_tester_file.is_file() else {}
    return dict(state.get("custom_data") or {})


def add_custom_value(
    store: Dict[str, Any], key: str, data: Any, dtype: type = list, max_len: int = -1, mode: str = "append"
) -> None:
    """Store ``data`` under ``key``: ``append`` to a list/deque (made on first use) or ``replace``.

    Raises:
        ConfigError: an unknown mode, or a deque without a positive ``max_len``.
    """
    if mode == "replace":
        store[key] = data
        return
    if mode != "append":
        raise ConfigError(
            "Bad custom data mode",
            expected="'append' or 'replace'",
            found=repr(mode),
            fix="pass mode='append' or mode='replace'",
        )
    if key not in store:
        if dtype is collections.deque:
            if max_len <= 0:
                raise ConfigError(
                    "A deque needs a positive max_len",
                    expected="max_len > 0",
                    found=str(max_len),
                    fix="pass max_len=N",
                )
            store[key] = collections.deque(maxlen=max_len)
        elif dtype is list:
            store[key] = []
        else:
            store[key] = data
            return
    store[key].append(data)


__all__ = ["STATE_FORMAT_VERSION", "add_custom_value", "build_state", "read_custom_data", "write_state"]
