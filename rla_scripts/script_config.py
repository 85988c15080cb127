"""The original scripts' ``DATA_ROOT`` convention: ``config.py`` (xionghuichen) or
``rla_script_config.py`` (polixir) in the folder the script runs from."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Optional

CONFIG_FILES = ("rla_script_config.py", "config.py")


def config_data_root(cwd: Optional[Path] = None) -> Optional[str]:
    """``DATA_ROOT`` of the first config file in ``cwd`` (relative to it), or None without one."""
    folder = Path(cwd or Path.cwd())
    for name in CONFIG_FILES:
        path = folder / name
        if path.is_file():
            value = runpy.run_path(str(path)).get("DATA_ROOT")
            if isinstance(value, str) and value:
                return str((folder / value).resolve())
    return None


def default_data_root(cwd: Optional[Path] = None) -> str:
    """``DATA_ROOT`` of the first config file in ``cwd`` (relative to it), else RLA's lookup."""
    folder = Path(cwd or Path.cwd())
    found = config_data_root(folder)
    if found is not None:
        return found
    from rla_scripts.commands._common import resolve_data_root

    return str(resolve_data_root(None, cwd=folder))


__all__ = ["default_data_root", "config_data_root", "CONFIG_FILES"]
