"""RLA: reinforcement-learning experiments as items of a database on the filesystem.

The public names are resolved lazily so ``import RLA`` stays light: matplotlib, torch,
tensorboardX and paramiko are imported only by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import Any

from RLA.version import __version__

_LAZY = {
    "exp_manager": ("RLA.easy_log.tester", "exp_manager"),
    "logger": ("RLA.logger", None),
    "time_step_holder": ("RLA.logger.time_step", "time_step_holder"),
    "MatplotlibRecorder": ("RLA.easy_log.complex_data_recorder", "MatplotlibRecorder"),
    "ImgRecorder": ("RLA.easy_log.complex_data_recorder", "ImgRecorder"),
    "VideoRecorder": ("RLA.easy_log.complex_data_recorder", "VideoRecorder"),
    "ExperimentLoader": ("RLA.easy_log.exp_loader", "ExperimentLoader"),
    "plot_func": ("RLA.plot", "plot_func"),
    "query": ("RLA.query", None),
    "errors": ("RLA.errors", None),
    # polixir's extra exports (#17)
    "fork_log_file_fn": ("RLA.easy_log.exp_loader", "fork_log_file_fn"),
    "update_hyper_parameters_fn": ("RLA.easy_log.exp_loader", "update_hyper_parameters_fn"),
    "experiment_data_query": ("RLA.query_tool", "experiment_data_query"),
    "single_experiment_query": ("RLA.query_tool", "single_experiment_query"),
    "time_tracker": ("RLA.trackers.time_used_recorder", "polixir_time_tracker"),
}
#: ``from RLA import *`` of the original also gave the constants of RLA.easy_log.const / RLA.const.
for _module in ("RLA.easy_log.const", "RLA.const"):
    for _name in (
        "LOG",
        "CODE",
        "CHECKPOINT",
        "ARCHIVE_TESTER",
        "OTHER_RESULTS",
        "ARCHIVED_TABLE",
        "TMP_DATA",
        "HYPARAMETER",
        "HYPARAM_FILE_NAME",
        "default_log_types",
        "LoadTesterMode",
        "LogDataType",
        "DEFAULT_X_NAME",
        "DEFAULT_TIMESTAMP",
        "FRAMEWORK",
        "FTP_PROTOCOL_NAME",
        "LOG_NAME_FORMAT_VERSION",
        "PLATFORM_TYPE",
    ):
        if _name not in _LAZY and (_module == "RLA.const") == _name.startswith(
            ("DEFAULT_", "FRAMEWORK", "FTP_", "LOG_NAME", "PLATFORM")
        ):
            _LAZY[_name] = (_module, _name)

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'RLA' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(__all__)
