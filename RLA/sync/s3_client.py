"""The object-store calls of the S3 transport (s3fs), with request counting and error translation.

Credentials are never passed in: s3fs (botocore) finds them in the standard places, the
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` environment
variables, a profile of ``~/.aws/credentials``, or the instance's role.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import threading
import time
from collections import Counter, OrderedDict
from typing import Any, Dict, Iterator, List, Optional, Tuple

from fsspec.asyn import sync

from RLA.errors import AuthError, SyncError, TransportError
from RLA.sync.s3_parts import ObjectInfo

#: Most pages one listing reads (1,000 keys each): a store cannot keep a listing going forever.
MAX_LIST_PAGES = 100_000
#: Error codes that mean "the credentials are wrong", never retried.
_AUTH_CODES = (
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "AccessDenied",
    "NoCredentialsError",
    "PartialCredentialsError",
)

#: How a GET with If-Match answers for an object replaced meanwhile (botocore, s3fs's translation).
_CHANGED = ("PreconditionFailed", "pre-conditions you specified did not hold", "(412)")


def _seconds(when: Any) -> Optional[float]:
    if isinstance(when, _dt.datetime):
        return when.timestamp()
    return None


#: Seconds an s3fs session serves later transports of the same process (same store, same
#: credential settings): making one costs about 0.2 s of CPU (botocore's models).
SESSION_TTL = 300.0
#: The environment variables that choose credentials, region and endpoint: a session is
#: reused only while they are unchanged (compared by a digest kept in memory only).
SESSION_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_CA_BUNDLE",
)
_SESSIONS: "OrderedDict[str, Tuple[float, Any]]" = OrderedDict()
_SESSIONS_LOCK = threading.Lock()


def _session(
    endpoint: Optional[str], profile: Optional[str], client_kwargs: Dict[str, Any], timeout: float
) -> Any:
    """An s3fs session for these settings: the one made less than :data:`SESSION_TTL` seconds
    ago by this process with the same settings and credential environment, else a new one."""
    import s3fs

    settings = [
        os.getpid(),
        endpoint,
        profile,
        client_kwargs,
        timeout,
        [os.environ.get(n) for n in SESSION_ENV],
    ]
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()
    now = time.monotonic()
    with _SESSIONS_LOCK:
        held = _SESSIONS.get(digest)
        if held is not None and 0 <= now - held[0] < SESSION_TTL:
            return held[1]
        fs = s3fs.S3FileSystem(
            endpoint_url=endpoint,
            profile=profile,
            client_kwargs=client_kwargs,
            config_kwargs={
                "connect_timeout": timeout,
                "read_timeout": timeout,
                "retries": {"max_attempts": 2},
            },
            use_listings_cache=False,
            skip_instance_cache=True,
        )
        fs.retries = 2  # the syncer retries whole runs with its own backoff
        _SESSIONS[digest] = (now, fs)
        while len(_SESSIONS) > 4:
            _SESSIONS.popitem(last=False)
        return fs


class S3Client:
    """One s3fs session on one bucket; every request is counted in :attr:`requests`.

    Args:
        bucket: the bucket's name.
        endpoint_url: the store's URL (MinIO, Ceph); ``None``: AWS (or ``$AWS_ENDPOINT_URL``).
        region: the region name; ``None``: from the profile or the environment.
        profile: a profile of ``~/.aws/config`` / ``~/.aws/credentials``.
        timeout: seconds for connecting and for each read.
    """

    def __init__(
        self,
        bucket: str,
        endpoint_url: Optional[str] = None,
        region: Optional[str] = None,
        profile: Optional[str] = None,
        timeout: float = 30.0,
    ) -> None:
        self.bucket = bucket
        self.where = f"s3://{bucket}" + (f" at {endpoint_url}" if endpoint_url else "")
        self.requests: Counter = Counter()
        self._count_lock = threading.Lock()  # downloads run in threads on this one session
        client_kwargs: Dict[str, Any] = {}
        if region:
            client_kwargs["region_name"] = region
        endpoint = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        self.fs = _session(endpoint, profile, client_kwargs, timeout)

    def fail(self, action: str, key: str, exc: BaseException) -> SyncError:
        """The error to raise for ``exc`` (credentials problems are :class:`AuthError`)."""
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, PermissionError) or any(code in text for code in _AUTH_CODES):
            return AuthError(
                f"The object store refused to {action} s3://{self.bucket}/{key}",
                expected="credentials allowed to read and write the bucket",
                found=text,
                fix="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or "
                "REMOTE_SETTING.profile to a profile of ~/.aws/credentials, or use an "
                "instance role; never put keys in rla_config.yaml",
            )
        return TransportError(
            f"S3 could not {action} s3://{self.bucket}/{key} ({self.where})",
            expected="a reachable object store and an existing bucket",
            found=text,
            fix="check REMOTE_SETTING.endpoint_url, bucket and region, then sync again",
        )

    def count(self, method: str) -> None:
        """Count one request of ``method``."""
        with self._count_lock:
            self.requests[method] += 1

    def call(self, method: str, key: str = "", **kwargs: Any) -> Any:
        """``method`` of the S3 API on this bucket (``Key=key`` unless ``key`` is empty)."""
        self.count(method)
        if key:
            kwargs["Key"] = key
        try:
            return self.fs.call_s3(method, Bucket=self.bucket, **kwargs)
        except FileNotFoundError:
            raise
        except Exception as exc:  # noqa: BLE001 - botocore/aiohttp errors become TransportError
            raise self.fail(method.replace("_", " "), key, exc) from None

    def head(self, key: str) -> Optional[Dict[str, Any]]:
        """HEAD ``key``: ``None`` when there is no such object."""
        try:
            return self.call("head_object", key)
        except FileNotFoundError:
            return None

    def list(self, prefix: str, delimiter: Optional[str] = None) -> Tuple[List[ObjectInfo], List[str]]:
        """Objects below ``prefix`` (and, with a delimiter, the common prefixes), all pages."""
        objects: List[ObjectInfo] = []
        prefixes: List[str] = []
        for page in self._pages(prefix, delimiter):
            for item in page.get("Contents", ()):
                objects.append(
                    ObjectInfo(
                        str(item["Key"]),
                        int(item.get("Size", 0)),
                        str(item.get("ETag", "")),
                        _seconds(item.get("LastModified")),
                    )
                )
            prefixes.extend(str(p["Prefix"]) for p in page.get("CommonPrefixes", ()))
        return objects, prefixes

    def _pages(self, prefix: str, delimiter: Optional[str]) -> Iterator[Dict[str, Any]]:
        kwargs: Dict[str, Any] = {"Prefix": prefix}
        if delimiter:
            kwargs["Delimiter"] = delimiter
        for _ in range(MAX_LIST_PAGES):
            try:
                page = self.call("list_objects_v2", **kwargs)
            except FileNotFoundError as exc:  # the bucket itself is missing
                raise self.fail("list", prefix, exc) from None
            yield page
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            kwargs["ContinuationToken"] = token

    def put(self, key: str, data: bytes, metadata: Dict[str, str]) -> str:
        """One atomic PUT; returns the new object's ETag."""
        return str(self.call("put_object", key, Body=data, Metadata=metadata).get("ETag", ""))

    def get(self, key: str, start: int, end: int, etag: str = "") -> bytes:
        """Bytes ``start .. end-1`` of ``key`` (FileNotFoundError when it is gone).

        With ``etag``, only that version is read (``If-Match``): an object replaced since it
        was listed reads as gone, never as a piece of its new content.
        """
        self.count("get_object")
        if end <= start:
            return b""
        try:
            if not etag:
                return self.fs.cat_file(f"{self.bucket}/{key}", start=start, end=end)
            return sync(self.fs.loop, self._get_if_match, key, start, end, etag)
        except FileNotFoundError:
            raise
        except Exception as exc:  # noqa: BLE001
            if etag and any(mark in f"{exc!r} {exc.__cause__!r}" for mark in _CHANGED):
                raise FileNotFoundError(f"{key} changed since it was listed") from None
            raise self.fail("read", key, exc) from None

    async def _get_if_match(self, key: str, start: int, end: int, etag: str) -> bytes:
        resp = await self.fs._call_s3(
            "get_object", Bucket=self.bucket, Key=key, IfMatch=etag, Range=f"bytes={start}-{end - 1}"
        )
        try:
            return await resp["Body"].read()
        finally:
            resp["Body"].close()

    def copy(self, src: str, dst: str, metadata: Optional[Dict[str, str]] = None) -> str:
        """Server-side copy (no payload travels); with ``metadata``, it replaces the old one."""
        extra: Dict[str, Any] = {"MetadataDirective": "COPY"}
        if metadata is not None:
            extra = {"MetadataDirective": "REPLACE", "Metadata": metadata}
        out = self.call("copy_object", dst, CopySource={"Bucket": self.bucket, "Key": src}, **extra)
        return str(out.get("CopyObjectResult", {}).get("ETag", ""))

    def delete(self, keys: List[str]) -> None:
        """Delete ``keys`` (missing ones are fine), up to 1,000 per request."""
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start : start + 1000]]
            self.call("delete_objects", Delete={"Objects": batch, "Quiet": True})

    def compose(self, dst: str, segments: List[Tuple[str, Any]], metadata: Dict[str, str]) -> str:
        """One multipart upload of ``segments`` (``("copy", key)`` or ``("data", bytes)``), in order.

        Nothing is visible at ``dst`` before the upload completes (then all at once).
        """
        upload = self.call("create_multipart_upload", dst, Metadata=metadata)["UploadId"]
        try:
            parts = []
            for number, (kind, value) in enumerate(segments, start=1):
                if kind == "copy":
                    out = self.call(
                        "upload_part_copy",
                        dst,
                        UploadId=upload,
                        PartNumber=number,
                        CopySource={"Bucket": self.bucket, "Key": value},
                    )
                    etag = out["CopyPartResult"]["ETag"]
                else:
                    etag = self.call("upload_part", dst, UploadId=upload, PartNumber=number, Body=value)[
                        "ETag"
                    ]
                parts.append({"PartNumber": number, "ETag": etag})
            out = self.call(
                "complete_multipart_upload", dst, UploadId=upload, MultipartUpload={"Parts": parts}
            )
            return str(out.get("ETag", ""))
        except BaseException:
            try:
                self.call("abort_multipart_upload", dst, UploadId=upload)
            except Exception:  # noqa: BLE001 - the store expires it; the first error matters
                pass
            raise
