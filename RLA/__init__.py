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
    "logger": ("RLA.easy_log.logger", None),
    "time_step_holder": ("RLA.easy_log.time_step", "time_step_holder"),
    "MatplotlibRecorder": ("RLA.easy_log.complex_data_recorder", "MatplotlibRecorder"),
    "ImgRecorder": ("RLA.easy_log.complex_data_recorder", "ImgRecorder"),
    "VideoRecorder": ("RLA.easy_log.complex_data_recorder", "VideoRecorder"),
    "ExperimentLoader": ("RLA.easy_log.exp_loader", "ExperimentLoader"),
    "plot_func": ("RLA.plot", "plot_func"),
    "query": ("RLA.query", None),
    "errors": ("RLA.errors", None),
}

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
