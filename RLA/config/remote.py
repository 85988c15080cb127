"""The ``REMOTE_SETTING`` section: where and how a worker node sends its runs."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from RLA.config.fields import option

PASSWORD_ENV = "RLA_REMOTE_PASSWORD"


@dataclass(frozen=True)
class RemoteSettings:
    """Settings of the main node (the sync target)."""

    file_transfer_protocol: str = option("sftp", choices=("sftp", "ftp", "local"),
                                         doc="transport used to reach the main node")
    ftp_server: Optional[str] = option(None, doc="host name or IP address of the main node")
    port: Optional[int] = option(None, types=(int,), doc="port of the main node (default 22 for sftp, 21 for ftp)")
    username: Optional[str] = option(None, doc="login on the main node")
    password: Optional[str] = option(None, secret=True,
                                     doc=f"password; prefer the environment variable {PASSWORD_ENV} or an SSH key")
    remote_data_root: Optional[str] = option(None, aliases=("remote_log_root",),
                                             doc="data_root of the database on the main node")

    def resolved_password(self) -> Optional[str]:
        """The password from ``RLA_REMOTE_PASSWORD`` if set, else from the config."""
        return os.environ.get(PASSWORD_ENV) or self.password

    def __repr__(self) -> str:  # never show the password
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__dataclass_fields__
                          if k != "password")
        return f"RemoteSettings({shown}, password={'<set>' if self.password else None})"
