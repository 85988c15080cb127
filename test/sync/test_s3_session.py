"""An s3fs session is reused by later transports of the process only with the same store and credentials.

No request is sent: making an :class:`RLA.sync.s3_client.S3Client` does not connect.
"""

from __future__ import annotations

import pytest

pytest.importorskip("s3fs")

from RLA.sync import s3_client  # noqa: E402
from RLA.sync.s3_client import S3Client  # noqa: E402


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIARLASESSIONTEST01")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "session-test-secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(s3_client, "_SESSIONS", type(s3_client._SESSIONS)())


def test_the_same_settings_share_one_session() -> None:
    first = S3Client("a", "http://127.0.0.1:9", "us-east-1")
    assert S3Client("b", "http://127.0.0.1:9", "us-east-1").fs is first.fs  # the bucket is per request
    assert first.requests is not S3Client("a", "http://127.0.0.1:9", "us-east-1").requests


@pytest.mark.parametrize(
    "change",
    ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"],
)
def test_other_credentials_get_a_new_session(monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """Changed credentials (or profile, endpoint) in the environment are never served an older session."""
    first = S3Client("a", None, "us-east-1")
    monkeypatch.setenv(change, "changed-value")
    assert S3Client("a", None, "us-east-1").fs is not first.fs


def test_other_stores_and_old_sessions_get_a_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    first = S3Client("a", "http://127.0.0.1:9", "us-east-1")
    assert S3Client("a", "http://127.0.0.1:10", "us-east-1").fs is not first.fs
    assert S3Client("a", "http://127.0.0.1:9", "eu-west-1").fs is not first.fs
    assert S3Client("a", "http://127.0.0.1:9", "us-east-1", profile="other").fs is not first.fs
    monkeypatch.setattr(s3_client, "SESSION_TTL", 0.0)
    assert S3Client("a", "http://127.0.0.1:9", "us-east-1").fs is not first.fs
