"""Sync runs between machines: the transport registry and :func:`open_transport`.

Transports are plug-ins registered by name (``sftp``, ``ftp``, ``local``, ``s3``); third-party
packages add more through the ``rla.sync_transports`` entry-point group. Heavy
dependencies (paramiko) are imported only when their transport is opened.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Callable, Optional

from RLA.config.remote import RemoteSettings
from RLA.errors import ConfigError
from RLA.registry import Registry
from RLA.sync.base import RemoteEntry, RemoteStat, Transport, WriteResult

TRANSPORTS: Registry[type] = Registry("sync transport", entry_point_group="rla.sync_transports")
TRANSPORTS.register("local", "RLA.sync.local:LocalTransport")
TRANSPORTS.register("ftp", "RLA.sync.ftp:FTPTransport")
TRANSPORTS.register("sftp", "RLA.sync.sftp:SFTPTransport", install_hint="pip install paramiko")
TRANSPORTS.register("s3", "RLA.sync.s3:S3Transport", install_hint="pip install 'RLA[s3]' (s3fs)")


def open_transport(
    settings: RemoteSettings,
    project_root: Optional[Path] = None,
    warn: Optional[Callable[[str], None]] = None,
) -> Transport:
    """Connect to the main node described by ``settings`` (one connection).

    Args:
        settings: the ``REMOTE_SETTING`` section.
        project_root: folder that relative ``key_filename`` / ``known_hosts`` refer to.
        warn: receives warnings (password read from the config, host key trusted).

    Raises:
        ConfigError: the server address is missing.
        AuthError: credentials or host key rejected.
        TransportError: the server cannot be reached.
    """
    protocol = settings.file_transfer_protocol
    cls = TRANSPORTS.get(protocol)
    if protocol == "local":
        return cls()
    if protocol == "s3":  # credentials: AWS environment, profile or instance role only
        return cls(
            bucket=settings.bucket,
            prefix=settings.prefix or "",
            endpoint_url=settings.endpoint_url,
            region=settings.region,
            profile=settings.profile,
            timeout=settings.timeout,
        )
    if not settings.ftp_server:
        raise ConfigError(
            "REMOTE_SETTING.ftp_server is not set",
            expected="the main node's host name or address",
            found="an empty value",
            fix="set REMOTE_SETTING.ftp_server in rla_config.yaml",
        )
    if settings.password_from_config() and warn is not None:
        warn(
            "REMOTE_SETTING.password is read from rla_config.yaml; prefer an SSH key or the "
            "environment variable RLA_REMOTE_PASSWORD"
        )
    if protocol == "ftp" and settings.resolved_password():
        _warn_clear_text(settings, warn)
    return cls(
        host=settings.ftp_server,
        port=settings.port,
        username=settings.username or None,
        password=settings.resolved_password(),
        key_filename=_resolve(settings.key_filename, project_root),
        allow_agent=settings.allow_agent,
        known_hosts=_resolve(settings.known_hosts, project_root),
        host_key_policy=settings.host_key_policy,
        timeout=settings.timeout,
        warn=warn,
    )


def _resolve(path: Optional[str], project_root: Optional[Path]) -> Optional[str]:
    """``~`` expanded; a relative path is taken from ``project_root`` (when given)."""
    if not path:
        return None
    expanded = Path(os.path.expanduser(path))
    if not expanded.is_absolute() and project_root is not None:
        expanded = project_root / expanded
    return str(expanded)


def _warn_clear_text(settings: RemoteSettings, warn: Optional[Callable[[str], None]]) -> None:
    """FTP sends the password (and every file) readable by anyone on the path: say so each time."""
    message = (
        f"the password for {settings.username or 'anonymous'}@{settings.ftp_server} is sent in "
        f"clear text over FTP, and so is every file; use file_transfer_protocol: sftp (SSH) "
        f"unless the network is yours"
    )
    if warn is not None:
        warn(message)
    else:
        warnings.warn(message, RuntimeWarning, stacklevel=3)


__all__ = ["TRANSPORTS", "RemoteEntry", "RemoteStat", "Transport", "WriteResult", "open_transport"]
