"""open_transport() hands the transport its key and known_hosts files as the config means them:
relative to the project's folder, ``~`` expanded, absolute ones unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from RLA.config.remote import RemoteSettings
from RLA.sync import TRANSPORTS, open_transport


class _Recorder:
    """A stand-in SFTP transport that keeps the arguments it was opened with."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


@pytest.fixture()
def recorded(monkeypatch):
    monkeypatch.setitem(TRANSPORTS._entries, "sftp", _Recorder)


def _open(project_root, **paths):
    settings = RemoteSettings(file_transfer_protocol="sftp", ftp_server="127.0.0.1", **paths)
    transport = open_transport(settings, project_root=project_root)
    assert isinstance(transport, _Recorder)
    return transport.kwargs


def test_relative_key_and_known_hosts_are_taken_from_the_project_root(recorded, tmp_path):
    got = _open(tmp_path, key_filename="keys/id_ed25519", known_hosts="keys/known_hosts")
    assert got["key_filename"] == str(tmp_path / "keys" / "id_ed25519")
    assert got["known_hosts"] == str(tmp_path / "keys" / "known_hosts")


def test_home_is_expanded_and_absolute_paths_stay(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    got = _open(tmp_path / "project", key_filename="~/.ssh/id_rsa", known_hosts="/etc/ssh/known_hosts")
    assert got["key_filename"] == str(tmp_path / "home" / ".ssh" / "id_rsa")
    assert got["known_hosts"] == "/etc/ssh/known_hosts"


def test_without_a_project_root_or_a_value_nothing_is_invented(recorded):
    got = _open(None, key_filename="id_rsa")
    assert got["key_filename"] == "id_rsa" and got["known_hosts"] is None
    assert Path(got["key_filename"]).is_absolute() is False
