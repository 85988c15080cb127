"""The ``REMOTE_SETTING`` section: where and how a worker node sends its runs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional

from RLA.config.fields import option
from RLA.errors import ConfigError

PASSWORD_ENV = "RLA_REMOTE_PASSWORD"

#: Data types synced when ``sync_types`` is not given (checkpoints and replay on request).
DEFAULT_SYNC_TYPES = ("log", "code", "results", "archive_tester")
_ALL_TYPES = ("log", "code", "checkpoint", "results", "replay", "archive_tester")
HOST_KEY_POLICIES = ("reject", "trust_on_first_use")


def _non_negative(value: float) -> float:
    if value < 0:
        raise ValueError("use a number >= 0")
    return value


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("use a number > 0")
    return value


_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "KIB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "MIB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "GIB": 1024**3,
    "T": 1024**4,
    "TB": 1024**4,
    "TIB": 1024**4,
}


def parse_size(value: "int | str") -> int:
    """A byte count from an int or a text like ``512K``, ``100M``, ``2G`` (binary units); must be > 0."""
    if isinstance(value, bool):
        raise ValueError("use a number of bytes such as 104857600 or 100M")
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip().upper().replace(" ", "")
        digits = text.rstrip("KMGTIB")
        unit = text[len(digits) :]
        if not digits.isdigit() or not digits.isascii() or unit not in _SIZE_UNITS:
            raise ValueError(f"use a number of bytes such as 104857600 or 100M, not {value!r}")
        number = int(digits) * _SIZE_UNITS[unit]
    if number <= 0:
        raise ValueError("use a size > 0")
    return number


@dataclass(frozen=True)
class RemoteSettings:
    """Settings of the main node (the sync target).

    The password is never part of ``repr`` or of :func:`RLA.config.fields.public_dict`;
    read it with :meth:`resolved_password`.
    """

    file_transfer_protocol: str = option(
        "sftp", choices=("sftp", "ftp", "local", "s3"), doc="transport used to reach the main node"
    )
    ftp_server: Optional[str] = option(None, doc="host name or IP address of the main node")
    port: Optional[int] = option(
        None, types=(int,), doc="port of the main node (default 22 for sftp, 21 for ftp)"
    )
    username: Optional[str] = option(None, doc="login on the main node")
    password: Optional[str] = option(
        None, secret=True, doc=f"password; prefer the environment variable {PASSWORD_ENV} or an SSH key"
    )
    remote_data_root: Optional[str] = option(
        None, aliases=("remote_log_root",), doc="data_root of the database on the main node"
    )
    key_filename: Optional[str] = option(None, doc="SSH private key file (relative to the config's folder)")
    allow_agent: bool = option(True, types=(bool,), doc="let SFTP authenticate through a running ssh-agent")
    known_hosts: Optional[str] = option(
        None, doc="known_hosts file checked for the server's host key (default ~/.ssh/known_hosts)"
    )
    host_key_policy: str = option(
        "reject",
        choices=HOST_KEY_POLICIES,
        doc="unknown host key: 'reject' it, or 'trust_on_first_use' and record it",
    )
    sync_types: List[str] = option(
        types=(list,),
        list_of=(str,),
        choices=_ALL_TYPES,
        default_factory=lambda: list(DEFAULT_SYNC_TYPES),
        doc="data types pushed and pulled",
    )
    background: bool = option(False, types=(bool,), doc="sync_log_file() returns at once; a thread sends")
    retries: int = option(
        3, types=(int,), convert=_non_negative, doc="reconnect attempts after a transport failure"
    )
    backoff: float = option(
        1.0,
        types=(float,),
        convert=_non_negative,
        doc="seconds before the first retry; doubled after each failure",
    )
    timeout: float = option(
        30.0, types=(float,), convert=_positive, doc="seconds before a connection or a transfer is given up"
    )
    max_file_size: Optional[int] = option(
        None,
        types=(int, str),
        convert=parse_size,
        doc="files larger than this (bytes, or e.g. 100M) are skipped "
        "with a warning by push and pull; unset: no cap",
    )
    bucket: Optional[str] = option(None, doc="s3: the bucket holding the database")
    prefix: Optional[str] = option(
        None, doc="s3: key prefix of the database inside the bucket (e.g. labs/rl)"
    )
    endpoint_url: Optional[str] = option(
        None, doc="s3: URL of an S3-compatible store (MinIO, Ceph); unset: AWS or $AWS_ENDPOINT_URL"
    )
    region: Optional[str] = option(None, doc="s3: region name (unset: from the AWS profile or environment)")
    profile: Optional[str] = option(
        None, doc="s3: AWS profile whose credentials are used (credentials never go into rla_config.yaml)"
    )

    def __post_init__(self) -> None:
        if self.file_transfer_protocol != "s3":
            return
        if self.password or self.username:
            raise ConfigError(
                "REMOTE_SETTING holds credentials for file_transfer_protocol: s3",
                expected="no username or password: S3 credentials come from the environment",
                found=f"REMOTE_SETTING.{'password' if self.password else 'username'} is set "
                f"(its value is not shown)",
                fix="remove it from rla_config.yaml; set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY in the environment, or name a profile of "
                "~/.aws/credentials in REMOTE_SETTING.profile, or use an instance role",
            )
        if not self.bucket:
            raise ConfigError(
                "REMOTE_SETTING.bucket is not set",
                expected="the bucket of the database for s3",
                found="an empty value",
                fix="set REMOTE_SETTING.bucket in rla_config.yaml",
            )

    def data_root_on_remote(self) -> Optional[str]:
        """``remote_data_root``; for s3, where unset, the root of ``prefix`` (``/``)."""
        if self.file_transfer_protocol == "s3":
            return self.remote_data_root or "/"
        return self.remote_data_root

    def address(self) -> Optional[str]:
        """The server part of the target's name (no secret): host, or endpoint and bucket for s3."""
        if self.file_transfer_protocol == "s3":
            prefix = (self.prefix or "").strip("/")
            return f"{self.endpoint_url or 'aws'}|{self.region or ''}|{self.bucket}/{prefix}"
        return self.ftp_server

    def resolved_password(self) -> Optional[str]:
        """The password from ``RLA_REMOTE_PASSWORD`` if set, else from the config."""
        return os.environ.get(PASSWORD_ENV) or self.password

    def password_from_config(self) -> bool:
        """Whether the password comes from the config file (which deserves a warning)."""
        return bool(self.password) and not os.environ.get(PASSWORD_ENV)

    def __repr__(self) -> str:  # never show the password
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__dataclass_fields__ if k != "password")
        return f"RemoteSettings({shown}, password={'<set>' if self.password else None})"
