"""SFTP host-key verification and authentication failures (real sshd), FTP login failures."""
from __future__ import annotations

import subprocess

import pytest

from RLA.errors import AuthError
from RLA.sync import open_transport
from sync_helpers import FTP_USER, ftp_settings, sftp_settings

pytestmark = pytest.mark.timeout(60)
WRONG = "Wr0ng-Passw0rd-xyzzy"


def _fingerprint(pub) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(pub)], capture_output=True, text=True, timeout=10)
    return out.stdout.split()[1]


def test_unknown_host_key_is_rejected_with_its_fingerprint(sshd, tmp_path) -> None:
    """An empty known_hosts rejects the server and names its SHA256 fingerprint."""
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(AuthError) as info:
        open_transport(sftp_settings(sshd, tmp_path, known_hosts=str(empty)))
    message = str(info.value)
    assert _fingerprint(sshd.host_pub) in message
    assert "known_hosts" in message and "trust_on_first_use" in message
    assert empty.read_text() == ""


def test_changed_host_key_is_rejected(sshd, tmp_path) -> None:
    """A known_hosts entry with another key for the server is a hard failure."""
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True, timeout=30)
    algo, key = (tmp_path / "other.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {algo} {key}\n")
    with pytest.raises(AuthError, match="does not match") as info:
        open_transport(sftp_settings(sshd, tmp_path, known_hosts=str(known)))
    assert _fingerprint(sshd.host_pub) in str(info.value)


def test_trust_on_first_use_records_the_key(sshd, tmp_path) -> None:
    """With the opt-in, the first connection records the key; later ones verify against it."""
    known = tmp_path / "ssh" / "known_hosts"
    warnings = []
    with open_transport(sftp_settings(sshd, tmp_path, known_hosts=str(known),
                                      host_key_policy="trust_on_first_use"), warn=warnings.append):
        pass
    assert f"[127.0.0.1]:{sshd.port}" in known.read_text()
    assert any(_fingerprint(sshd.host_pub) in w for w in warnings)
    with open_transport(sftp_settings(sshd, tmp_path, known_hosts=str(known))) as transport:
        assert transport.listdir("/") != []


def test_wrong_password_is_an_auth_error_without_the_password(sshd, tmp_path, monkeypatch) -> None:
    """Password auth with a wrong RLA_REMOTE_PASSWORD fails clearly and never echoes it."""
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", WRONG)
    settings = sftp_settings(sshd, tmp_path, key_filename=None)
    with pytest.raises(AuthError) as info:
        open_transport(settings)
    texts = [str(info.value), repr(info.value), repr(settings), str(info.value.__cause__)]
    assert "authentication" in str(info.value).lower()
    assert all(WRONG not in text for text in texts)


def test_ftp_wrong_password_is_an_auth_error_without_the_password(ftpd, monkeypatch) -> None:
    """FTP login refused → AuthError naming the user, not the password."""
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", WRONG)
    with pytest.raises(AuthError) as info:
        open_transport(ftp_settings(ftpd, password=None))
    assert FTP_USER in str(info.value) and WRONG not in str(info.value)


def test_transport_repr_hides_the_password(ftpd) -> None:
    """Neither settings nor a transport show the password in their repr."""
    settings = ftp_settings(ftpd)
    with open_transport(settings) as transport:
        assert settings.password not in repr(transport) and settings.password not in repr(settings)
