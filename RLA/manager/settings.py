"""The arguments of ``exp_manager.configure()`` checked and resolved (task, config, data root, scripts)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from RLA.config import RLAConfig, load_config
from RLA.errors import ConfigError
from RLA.layout import ARCHIVE
from RLA.manager.preflight import check_config

ConfigSource = Union[str, Path, Dict[str, Any], RLAConfig, None]


def check_task(task: Optional[str]) -> str:
    """The task name, stripped of spaces and outer slashes.

    Raises:
        ConfigError: no task, or a task with an empty, ``.`` or ``..`` part.
    """
    if task is None or not str(task).strip():
        raise ConfigError(
            "configure() needs a task name",
            expected="task_table_name='my_task'",
            found=repr(task),
            fix="pass the task (table) the run belongs to",
        )
    task = str(task).strip().strip("/")
    if any(part in ("", ".", "..") for part in task.split("/")):
        raise ConfigError(
            "Bad task name",
            expected="a name such as 'demo_task' (no empty, '.' or '..' parts)",
            found=repr(task),
            fix="rename the task",
        )
    if task.startswith(ARCHIVE + ":"):  # the query index keys an archived run "arc:<task>/..."
        raise ConfigError(
            f"The task {task!r} is refused: it spells the index key of an archived run",
            expected=f"a task that does not start with '{ARCHIVE}:'",
            found=repr(task),
            fix="rename the task",
        )
    return task


def load_checked_config(source: ConfigSource, code_root: Union[str, Path, None]) -> RLAConfig:
    """The config, checked before any run folder exists (LOG_USED names, the backend's package).

    Raises:
        ConfigError: no config, or an invalid one.
    """
    if source is None:
        raise ConfigError(
            "configure() needs rla_config",
            expected="a path to rla_config.yaml or a dict",
            found="None",
            fix="pass rla_config='rla_config.yaml' (create it with `rla init`)",
        )
    config = load_config(source, project_root=code_root)
    check_config(config)
    return config


def resolve_data_root(root: Union[str, Path, None], config: RLAConfig) -> Path:
    """The data root given, else the config's ``DATA_ROOT``, made absolute.

    Raises:
        ConfigError: neither is set.
    """
    if root is None and config.DATA_ROOT is not None:
        root = config.resolve(config.DATA_ROOT)
    if root is None:
        raise ConfigError(
            "configure() needs a data root",
            expected="data_root='./data' (or DATA_ROOT in the config)",
            found="None",
            fix="pass the folder that holds the database",
        )
    return Path(root).expanduser().resolve()


def resolve_run_files(run_file: Union[str, Path, Sequence[str], None]) -> List[Path]:
    """The scripts to back up: ``run_file``, or the main script when ``None``."""
    if run_file is None:
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        return [Path(main).resolve()] if main and Path(main).is_file() else []
    files = [run_file] if isinstance(run_file, (str, Path)) else list(run_file)
    return [Path(f).expanduser().resolve() for f in files]


__all__ = ["check_task", "load_checked_config", "resolve_data_root", "resolve_run_files"]
