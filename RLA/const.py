"""The original ``RLA.const`` names (x-axis column, frameworks, transfer protocols, platforms)."""

from __future__ import annotations

#: The x-axis column of ``progress.csv``.
DEFAULT_X_NAME = "time-step"
#: The wall-clock column polixir's logger adds to every row.
DEFAULT_TIMESTAMP = "timestamp"


class FRAMEWORK:
    """Values of ``DL_FRAMEWORK``."""

    tensorflow = "tensorflow"
    torch = "torch"


class FTP_PROTOCOL_NAME:
    """Values of ``REMOTE_SETTING.file_transfer_protocol``."""

    FTP = "ftp"
    SFTP = "sftp"


class LOG_NAME_FORMAT_VERSION:
    """Run-name formats: ``v1`` is ``HH-MM-SS-ffffff_<ip>_&k=v`` (legacy used spaces)."""

    V1 = "v1"


class PLATFORM_TYPE:
    """What :func:`RLA.utils.utils.get_sys_type` returns."""

    WIN = "win"
    LINUX = "linux"
    OTHER = "other"


__all__ = [
    "DEFAULT_X_NAME",
    "DEFAULT_TIMESTAMP",
    "FRAMEWORK",
    "FTP_PROTOCOL_NAME",
    "LOG_NAME_FORMAT_VERSION",
    "PLATFORM_TYPE",
]
