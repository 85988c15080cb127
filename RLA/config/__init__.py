"""Configuration: ``rla_config.yaml`` loading, validation and the documented default file."""

from __future__ import annotations

from pathlib import Path

from RLA.config.loader import CONFIG_NAME, find_config, load_config, read_yaml
from RLA.config.remote import PASSWORD_ENV, RemoteSettings
from RLA.config.schema import BackupConfig, ProjectType, RLAConfig, installed_framework

DEFAULT_CONFIG_FILE = Path(__file__).with_name("default_rla_config.yaml")


def default_config_text(dl_framework: str = "torch") -> str:
    """The documented default ``rla_config.yaml`` (what ``rla init`` writes).

    Args:
        dl_framework: the ``DL_FRAMEWORK`` value written (``rla init`` passes the installed one).
    """
    text = DEFAULT_CONFIG_FILE.read_text(encoding="utf-8")
    return text.replace("\nDL_FRAMEWORK: torch\n", f"\nDL_FRAMEWORK: {dl_framework}\n", 1)


__all__ = [
    "CONFIG_NAME",
    "PASSWORD_ENV",
    "BackupConfig",
    "ProjectType",
    "RLAConfig",
    "RemoteSettings",
    "default_config_text",
    "find_config",
    "installed_framework",
    "load_config",
    "read_yaml",
]
