"""The errors FTP and SFTP share (RLA.sync.session): worded per protocol, the password never in them."""
from __future__ import annotations

import pytest

from RLA.errors import TransportError
from RLA.sync.base import RemoteFileError
from RLA.sync.ftp import FTPTransport
from RLA.sync.sftp import SFTPTransport


def bare(cls, secret: str = "s3cr3t-pw"):
    """A transport object without a connection: only what the error helpers read."""
    transport = object.__new__(cls)
    transport._where, transport._secret = "me@host:21", secret
    return transport


@pytest.mark.parametrize("cls, protocol", [(FTPTransport, "FTP"), (SFTPTransport, "SFTP")])
def test_a_failed_operation_names_protocol_path_and_server_without_the_password(cls, protocol):
    error = bare(cls)._fail("write", "/r/f.csv", OSError("denied for s3cr3t-pw"))
    assert isinstance(error, TransportError)
    assert str(error).startswith(f"{protocol} could not write /r/f.csv on me@host:21.")
    assert f"a working {protocol} session" in str(error)
    assert "s3cr3t-pw" not in str(error) and "OSError: denied for" in str(error)


def test_call_turns_only_the_protocol_failures_into_transport_errors():
    ftp = bare(FTPTransport)
    with pytest.raises(TransportError, match="FTP could not list /x"):
        ftp._call("list", "/x", lambda: (_ for _ in ()).throw(EOFError("gone")))
    with pytest.raises(KeyError):  # a bug in RLA is not a network failure
        ftp._call("list", "/x", lambda: {}["k"])
    assert ftp._call("list", "/x", lambda: 7) == 7


def test_unreadable_file_is_a_remote_file_error_and_repr_hides_the_password():
    sftp = bare(SFTPTransport)
    error = sftp._unreadable("/r/gone", "FileNotFoundError: gone")
    assert isinstance(error, RemoteFileError) and str(error).startswith("SFTP cannot read /r/gone on me@host:21.")
    assert repr(sftp) == "SFTPTransport('me@host:21')" and "s3cr3t" not in repr(sftp)
