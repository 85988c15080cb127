"""A real S3 HTTP server for the sync tests: moto's standalone server on 127.0.0.1.

The server runs once per test session; each test gets its own bucket and dummy
credentials set in its own environment only (``monkeypatch``), never in a file.
"""
from __future__ import annotations

import io
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from sync_helpers import settings

ACCESS_KEY = "AKIARLATESTACCESS0042"
SECRET_KEY = "rla-test-S3-secret-Zq81vK3mXw"
_buckets = itertools.count()


@dataclass
class S3Box:
    """One test's bucket on the moto server and the credentials in its environment."""

    endpoint: str
    bucket: str

    def settings(self, prefix: str = "db", **extra: object) -> Any:
        base: Dict[str, object] = dict(file_transfer_protocol="s3", bucket=self.bucket, prefix=prefix,
                                       endpoint_url=self.endpoint, region="us-east-1")
        base.update(extra)
        return settings(**base)

    def boto(self) -> Any:
        """A plain boto3 client (to craft keys or inspect the bucket as another tool would)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")

    def put_many(self, objects: Dict[str, bytes]) -> None:
        """Store many objects at once, straight into the in-process moto server's bucket.

        For tests that need many keys on the store but are not about how they were uploaded
        (1,100 HTTP PUTs cost ~10 s on 2 cores; this costs ~0.1 s). The objects are the same
        ones a PUT creates (moto computes their ETags and times): listing and reading them go
        through HTTP as usual.
        """
        from moto.s3.models import s3_backends

        backends = [regions["global"] for regions in s3_backends.values()]
        owner = next(b for b in backends if self.bucket in b.buckets)
        for key, body in objects.items():
            owner.put_object(self.bucket, key, body)

    def keys(self) -> Dict[str, bytes]:
        """Every object of the bucket, key → bytes (raw: parts are separate objects)."""
        client = self.boto()
        out: Dict[str, bytes] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            for item in page.get("Contents", ()):
                out[item["Key"]] = client.get_object(Bucket=self.bucket, Key=item["Key"])["Body"].read()
        return out


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """moto's S3 server on a free 127.0.0.1 port (whole session); yields its URL."""
    pytest.importorskip("s3fs")
    server_mod = pytest.importorskip("moto.server")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> S3Box:
    """A fresh bucket; dummy AWS credentials in this test's environment only."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask an instance-metadata address
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    box = S3Box(moto_server, f"rla-test-{os.getpid()}-{next(_buckets)}")
    box.boto().create_bucket(Bucket=box.bucket)
    return box


class S3Target:
    """The sync target of the contract tests for S3: settings, and the store as a folder.

    ``root_on_disk`` downloads what a reader of the store sees (parts joined, modes from
    the objects' metadata) into a fresh folder at each access, so the tests compare trees.
    """

    kind = "s3"
    _copies = itertools.count()  # one counter for every view of the session: each view is a new folder

    def __init__(self, box: S3Box, work: Path) -> None:
        self.box, self.work = box, work
        self.settings = box.settings(prefix="lab", remote_data_root="/db")

    @property
    def root_on_disk(self) -> Path:
        from RLA.sync import open_transport

        root = self.work / f"s3_view_{next(self._copies)}"
        root.mkdir(parents=True)
        with open_transport(self.settings) as transport:
            for rel, _entry in transport.walk("/db"):
                sink = io.BytesIO()
                transport.read(f"/db/{rel}", sink, 0)
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(sink.getvalue())
                found = transport.stat(f"/db/{rel}")
                if found is not None and found.mode is not None:
                    os.chmod(path, found.mode)
        return root


@pytest.fixture
def s3_target(s3_bucket: S3Box, tmp_path: Path) -> S3Target:
    """The S3 transport on a fresh bucket (prefix ``lab``, remote data root ``/db``)."""
    return S3Target(s3_bucket, tmp_path)
