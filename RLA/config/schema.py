"""The shape of ``rla_config.yaml``: sections, keys, types and defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from RLA.config.fields import option, public_dict
from RLA.config.redact import RedactSettings
from RLA.config.remote import RemoteSettings

LOG_FORMATS_BUILTIN = ("stdout", "log", "csv", "json", "tensorboard")
DEFAULT_LOG_USED = ["stdout", "log", "csv", "tensorboard"]


def installed_framework() -> str:
    """``DL_FRAMEWORK`` when the config does not say: ``torch`` when PyTorch is installed, else ``none``.

    Looked up, not imported. A config that names ``torch`` explicitly without PyTorch is
    refused by ``exp_manager.configure()`` instead.
    """
    import importlib.util

    try:
        return "torch" if importlib.util.find_spec("torch") is not None else "none"
    except (ImportError, ValueError):
        return "none"


@dataclass(frozen=True)
class ProjectType:
    """``PROJECT_TYPE``: how the code is backed up."""

    backup_code_by: str = option(
        "source", choices=("source", "lib"), doc="'source' copies backup_code_dir, 'lib' copies lib_dir"
    )


@dataclass(frozen=True)
class BackupConfig:
    """``BACKUP_CONFIG``: what the code backup copies and ignores."""

    backup_code_dir: List[str] = option(
        types=(list,),
        list_of=(str,),
        default_factory=list,
        doc="dirs/files to back up, relative to the config's folder",
    )
    lib_dir: str = option("./build/lib/", doc="built library dir for 'lib' mode")
    ignore_code_paths: Optional[List[str]] = option(
        None, types=(list,), list_of=(str,), doc="gitignore-style files applied to the backup"
    )


@dataclass(frozen=True)
class RLAConfig:
    """A validated ``rla_config.yaml``.

    Attributes beyond the file's keys:
        source: the file it was read from (``None`` for a dict).
        project_root: the folder relative paths are resolved against.
    """

    PROJECT_TYPE: ProjectType = field(default_factory=ProjectType)
    BACKUP_CONFIG: BackupConfig = field(default_factory=BackupConfig)
    LOG_USED: List[str] = field(default_factory=lambda: list(DEFAULT_LOG_USED))
    DL_FRAMEWORK: str = field(default_factory=installed_framework)
    SEND_LOG_FILE: bool = False
    REMOTE_SETTING: RemoteSettings = field(default_factory=RemoteSettings)
    REDACT: RedactSettings = field(default_factory=RedactSettings)
    DATA_ROOT: Optional[str] = None
    HEARTBEAT_INTERVAL: float = 30.0
    STDOUT_INTERVAL: float = 5.0
    source: Optional[Path] = None
    project_root: Path = field(default_factory=Path.cwd)

    # Lower-case accessors used throughout the code base.
    @property
    def log_used(self) -> List[str]:
        return list(self.LOG_USED)

    @property
    def dl_framework(self) -> str:
        return self.DL_FRAMEWORK

    @property
    def send_log_file(self) -> bool:
        return self.SEND_LOG_FILE

    @property
    def remote(self) -> RemoteSettings:
        return self.REMOTE_SETTING

    @property
    def backup(self) -> BackupConfig:
        return self.BACKUP_CONFIG

    @property
    def backup_code_by(self) -> str:
        return self.PROJECT_TYPE.backup_code_by

    def resolve(self, relative: str) -> Path:
        """A path of the config made absolute against the config's folder."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.project_root / path)

    def public_dict(self) -> Dict[str, Any]:
        """The configuration without secrets, safe to print or store."""
        out = {
            "PROJECT_TYPE": public_dict(self.PROJECT_TYPE),
            "BACKUP_CONFIG": public_dict(self.BACKUP_CONFIG),
            "LOG_USED": self.log_used,
            "DL_FRAMEWORK": self.DL_FRAMEWORK,
            "SEND_LOG_FILE": self.SEND_LOG_FILE,
            "REMOTE_SETTING": public_dict(self.REMOTE_SETTING),
            "REDACT": public_dict(self.REDACT),
            "HEARTBEAT_INTERVAL": self.HEARTBEAT_INTERVAL,
            "STDOUT_INTERVAL": self.STDOUT_INTERVAL,
        }
        if self.DATA_ROOT is not None:
            out["DATA_ROOT"] = self.DATA_ROOT
        return out
