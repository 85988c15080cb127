"""``S3Transport``: an S3-compatible object store (AWS S3, MinIO, Ceph) as the main node, via s3fs.

Remote paths map to keys ``<prefix><path>``. Every object is published by one atomic PUT
(or one completed multipart upload), so no reader ever sees half an object. Writing at an
offset appends a *part* object (:mod:`RLA.sync.s3_parts`): growing logs cost only their
new bytes, and the parts are folded into the base object when they get many. A large
upload is sent in :attr:`S3Transport.piece_size` pieces, so an interrupted one resumes.
Modes and file times travel as object metadata (``rla-mode``, ``rla-mtime``).
"""

from __future__ import annotations

import os
import posixpath
from typing import IO, Callable, Dict, Iterator, List, Optional, Set, Tuple

from RLA.errors import ConfigError, TransportError
from RLA.safe_paths import is_plain_name
from RLA.sync.base import (
    MAX_WALK_DEPTH,
    PERMISSION_BITS,
    RemoteEntry,
    RemoteFileError,
    RemoteStat,
    Source,
    Transport,
    WriteResult,
)
from RLA.sync.s3_client import S3Client
from RLA.sync.s3_parts import (
    PARTS_SUFFIX,
    Joined,
    ObjectInfo,
    group,
    join,
    part_key,
    parts_prefix,
    should_compact,
)

#: Environment variable naming a fault point (``sync.s3:<point>``) where a test SIGKILLs the process.
FAULT_ENV = "RLA_FAULT"


def _fault(name: str) -> None:
    """Deterministic fault point ``sync.s3:<name>`` (one environment look-up when unused)."""
    if os.environ.get(FAULT_ENV, "") == f"sync.s3:{name}":
        from RLA.replay_buffer.snapshot import faults

        faults.fire(f"sync.s3:{name}", "kill")


def _metadata(mtime: Optional[float], mode: Optional[int]) -> Dict[str, str]:
    meta: Dict[str, str] = {}
    if mtime is not None:
        meta["rla-mtime"] = repr(float(mtime))
    if mode is not None:
        meta["rla-mode"] = oct(mode & PERMISSION_BITS)
    return meta


class S3Transport(Transport):
    """Files in one bucket (below ``prefix``) through s3fs; credentials from the AWS defaults.

    Args:
        bucket: the bucket.
        prefix: key prefix that plays the role of ``/`` (e.g. ``labs/rl``).
        endpoint_url: the store's URL for MinIO/Ceph (``http://127.0.0.1:9000``).
        region: region name.
        profile: AWS profile.
        timeout: seconds per connection and read.
    """

    name = "s3"
    #: Bytes per PUT of a large upload (resumable pieces); at least the 5 MiB multipart minimum.
    piece_size = 8 * 1024 * 1024
    #: Smallest part S3 accepts in a multipart upload (all but the last).
    min_part = 5 * 1024 * 1024
    #: One PUT publishes a file of up to one piece: push writes it in place.
    atomic_write_limit = piece_size
    #: Files a cache refresh downloads at the same time (one shared s3fs session).
    mirror_workers = 16

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        endpoint_url: Optional[str] = None,
        region: Optional[str] = None,
        profile: Optional[str] = None,
        timeout: float = 30.0,
        **_ignored: object,
    ) -> None:
        super().__init__()
        self.client = S3Client(bucket, endpoint_url, region, profile, timeout)
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        #: Files of the last :meth:`walk` (key → pieces): a read of one of them needs no HEAD.
        self._listed: Dict[str, Joined] = {}
        try:
            self.client.call("head_bucket")  # fail now (auth, endpoint, missing bucket), not mid-run
        except FileNotFoundError:
            raise ConfigError(
                f"The bucket {bucket!r} does not exist ({self.client.where})",
                expected="an existing bucket",
                found="404 Not Found for the bucket",
                fix="create it (e.g. `mc mb` on MinIO, `aws s3 mb`) or fix "
                "REMOTE_SETTING.bucket / endpoint_url",
            ) from None

    @property
    def requests(self) -> Dict[str, int]:
        """Requests sent so far, per S3 operation."""
        return dict(self.client.requests)

    def key_of(self, rpath: str) -> str:
        """The object key of the remote path ``rpath`` (below the prefix)."""
        rel = posixpath.normpath("/" + rpath).lstrip("/")
        return f"{self.prefix}{rel}" if rel not in ("", ".") else self.prefix.rstrip("/")

    # ------------------------------------------------------------------ reading
    def _joined(self, key: str) -> Joined:
        """The file at ``key``: HEAD of the base and one listing of its parts."""
        return self._joined_head(key)[0]

    def listed_tag(self, rpath: str) -> str:
        """The ETags of the pieces of ``rpath`` as the last :meth:`walk` listed them ("" if it did not)."""
        joined = self._listed.get(self.key_of(rpath))
        return joined.etag if joined is not None else ""

    def _forget(self, *keys: str) -> None:
        """Drop what the last walk said about ``keys`` (they are being changed)."""
        for key in keys:
            self._listed.pop(key, None)

    def _joined_head(self, key: str) -> Tuple[Joined, Optional[Dict[str, object]]]:
        head = self.client.head(key)
        parts, _ = self.client.list(parts_prefix(key))
        base = None
        if head is not None:
            base = ObjectInfo(key, int(head.get("ContentLength", 0)), str(head.get("ETag", "")))
        return join(base, parts), head

    def _meta(self, joined: Joined, head: Optional[Dict[str, object]] = None) -> Dict[str, str]:
        """The metadata of the newest piece (the base's HEAD is reused when there are no parts)."""
        if head is None or len(joined.pieces) != 1:
            head = self.client.head(joined.pieces[-1].key) if joined.pieces else None
        return dict((head or {}).get("Metadata", {}))  # type: ignore[call-overload]

    def stat(self, rpath: str) -> Optional[RemoteStat]:
        joined, head = self._joined_head(self.key_of(rpath))
        if not joined.pieces:
            return None
        meta = self._meta(joined, head)
        mtime = float(meta["rla-mtime"]) if "rla-mtime" in meta else None
        mode = int(meta["rla-mode"], 8) & PERMISSION_BITS if "rla-mode" in meta else None
        return RemoteStat(joined.size, mtime, mode)

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        key = self.key_of(rpath)
        base = f"{key}/" if key else ""
        objects, prefixes = self.client.list(base, delimiter="/")
        files = {o.key[len(base) :]: o for o in objects if o.key != base}
        out: List[RemoteEntry] = []
        for full in prefixes:
            name = full[len(base) :].rstrip("/")
            if name.endswith(PARTS_SUFFIX) and name[: -len(PARTS_SUFFIX)] in files:
                continue  # the parts of a listed file: joined below
            out.append(RemoteEntry(name, True))
        for name, obj in files.items():
            joined = obj
            if f"{base}{name}{PARTS_SUFFIX}/" in prefixes:
                parts, _ = self.client.list(parts_prefix(obj.key))
                whole = join(obj, parts)
                out.append(RemoteEntry(name, False, whole.size, whole.mtime))
                continue
            out.append(RemoteEntry(name, False, joined.size, joined.mtime))
        return out

    def walk(
        self, rpath: str, refuse: Optional[Callable[[str, str], None]] = None
    ) -> Iterator[Tuple[str, RemoteEntry]]:
        """Every file below ``rpath`` from one recursive listing (parts joined).

        Like :meth:`Transport.walk`, only keys whose every component is a plain name are
        yielded, at most :data:`MAX_WALK_DEPTH` levels down; the others go to ``refuse``.
        """
        key = self.key_of(rpath)
        base = f"{key}/" if key else ""
        objects, _ = self.client.list(base)
        refused: Set[str] = set()
        for full, joined in sorted(group(objects).items()):
            if not joined.pieces or full == base:
                continue
            self._listed[full] = joined
            parts = full[len(base) :].split("/")
            bad = next((i for i, part in enumerate(parts) if not is_plain_name(part)), None)
            why = "its name is not a plain file name"
            if bad is None and len(parts) > MAX_WALK_DEPTH:
                bad, why = MAX_WALK_DEPTH - 1, f"it is more than {MAX_WALK_DEPTH} folders deep"
            if bad is not None:  # a crafted key: reported whole (an object store lists no '.' of its own)
                rel = "/".join(parts)
                if refuse is not None and rel not in refused:
                    refuse(rel, why)
                refused.add(rel)
                continue
            yield "/".join(parts), RemoteEntry(parts[-1], False, joined.size, joined.mtime)

    def read(self, rpath: str, sink: IO[bytes], offset: int, limit: Optional[int] = None) -> int:
        """Bytes of ``rpath`` from ``offset``: the pieces the last walk listed (no HEAD), else HEAD + parts.

        A piece replaced since the listing reads as gone (its parts are keyed by the base's
        ETag) or with another size, which the caller's size check refuses.
        """
        key = self.key_of(rpath)
        hinted = key in self._listed
        joined = self._listed.get(key) or self._joined(key)
        if not joined.pieces:
            raise RemoteFileError(
                f"S3 cannot read {rpath}: no such object",
                expected="an object",
                found="nothing",
                fix="pull again",
            )
        end = joined.size if limit is None else min(joined.size, offset + limit)
        done, start = 0, 0
        for piece in joined.pieces:
            lo, hi = max(offset, start), min(end, start + piece.size)
            while lo < hi:
                step = min(hi, lo + self.piece_size)
                try:
                    data = self.client.get(
                        piece.key, lo - start, step - start, etag=piece.etag if hinted else ""
                    )
                except FileNotFoundError:
                    raise RemoteFileError(
                        f"S3 object {piece.key} vanished while being read",
                        expected="an object",
                        found="nothing (compacted or replaced meanwhile)",
                        fix="pull again",
                    ) from None
                sink.write(data[: step - lo])
                done += min(len(data), step - lo)
                lo = step
            start += piece.size
        return done

    # ------------------------------------------------------------------ writing
    def mkdir(self, rpath: str) -> None:
        """Object stores have no folders: a key's prefix exists as soon as the key does."""

    def write(
        self,
        rpath: str,
        source: Source,
        offset: int,
        length: int,
        mtime: Optional[float] = None,
        expect_size: Optional[int] = None,
        mode: Optional[int] = None,
    ) -> WriteResult:
        key = self.key_of(rpath)
        self._forget(key)
        meta = _metadata(mtime, mode)
        if offset == 0 and expect_size is None:
            return self._write_new(key, source, length, meta)
        joined = self._joined(key)
        size = joined.size if joined.pieces else -1
        if expect_size is not None and size != expect_size:
            return WriteResult(0, size)
        if size != offset:
            raise TransportError(
                f"S3 cannot write {rpath} at offset {offset}",
                expected=f"an append at the end ({size} bytes)",
                found=f"offset {offset}",
                fix="sync again: the file is sent whole",
            )
        sent, joined = self._append(joined, source, length, meta)
        if should_compact(joined):
            self._compose(key, joined, meta)
        return WriteResult(sent, joined.size)

    def _write_new(self, key: str, source: Source, length: int, meta: Dict[str, str]) -> WriteResult:
        """Replace ``key``: its old parts go first, then the first piece is one PUT."""
        self._drop_parts(key)
        data = source.read(min(length, self.piece_size))
        etag = self.client.put(key, data, meta)
        joined = join(ObjectInfo(key, len(data), etag), ())
        if len(data) < length:
            _fault("piece-sent")
            sent, joined = self._append(joined, source, length - len(data), meta)
            return WriteResult(len(data) + sent, joined.size)
        return WriteResult(len(data), joined.size)

    def _append(
        self, joined: Joined, source: Source, length: int, meta: Dict[str, str]
    ) -> Tuple[int, Joined]:
        """Publish ``length`` bytes as parts of at most :attr:`piece_size` (one PUT each)."""
        base = joined.pieces[0]
        pieces = list(joined.pieces)
        sent = 0
        while sent < length:
            data = source.read(min(length - sent, self.piece_size))
            if not data:
                break
            end = sum(p.size for p in pieces)
            key = part_key(base.key, base.etag, end, len(data))
            self.client.put(key, data, meta)
            pieces.append(ObjectInfo(key, len(data)))
            sent += len(data)
            _fault("part-published")
        return sent, Joined(tuple(pieces), joined.stale)

    def _segments(self, joined: Joined) -> Tuple[List[Tuple[str, object]], int]:
        """Multipart segments for ``joined``: large pieces copied server-side, small ones re-sent."""
        segments: List[Tuple[str, object]] = []
        buffer = bytearray()
        moved = 0
        last = joined.pieces[-1].key
        for piece in joined.pieces:
            # S3 takes a copied part of any size only as the last one of an upload
            if (piece.size >= self.min_part or (piece.key == last and segments)) and not buffer:
                segments.append(("copy", piece.key))
                continue
            buffer += self.client.get(piece.key, 0, piece.size)
            moved += piece.size
            if len(buffer) >= self.min_part:
                segments.append(("data", bytes(buffer)))
                buffer = bytearray()
        if buffer or not segments:
            segments.append(("data", bytes(buffer)))
        return segments, moved

    def _compose(self, dst: str, joined: Joined, meta: Dict[str, str]) -> None:
        """Publish the content of ``joined`` as the single object ``dst`` (atomic), then drop its parts."""
        meta = meta or self._meta(joined)
        segments, moved = self._segments(joined)
        self.bytes_received += moved
        if len(segments) == 1 and segments[0][0] == "data":
            self.client.put(dst, segments[0][1], meta)  # type: ignore[arg-type]
        else:
            self.client.compose(dst, segments, meta)
        self.bytes_sent += moved  # re-sent bytes count like any other upload
        _fault("compacted")
        self.client.delete([p.key for p in joined.parts if p.key != dst] + list(joined.stale))

    def _drop_parts(self, key: str) -> List[str]:
        parts, _ = self.client.list(parts_prefix(key))
        self.client.delete([p.key for p in parts])
        return [p.key for p in parts]

    def rename(self, src: str, dst: str) -> None:
        skey, dkey = self.key_of(src), self.key_of(dst)
        self._forget(skey, dkey)
        joined = self._joined(skey)
        if not joined.pieces:
            raise TransportError(
                f"S3 cannot rename {src}: no such object",
                expected="an object",
                found="nothing",
                fix="sync again",
            )
        self._drop_parts(dkey)
        if len(joined.pieces) == 1 and joined.size < 5 * 1024**3:
            self.client.copy(skey, dkey)
        else:
            self._compose(dkey, joined, {})
        _fault("renamed")
        self.client.delete([p.key for p in joined.pieces] + list(joined.stale))

    def remove(self, rpath: str) -> None:
        key = self.key_of(rpath)
        self._forget(key)
        self._drop_parts(key)
        self.client.delete([key])

    def set_mtime(self, rpath: str, mtime: float) -> None:
        self._forget(self.key_of(rpath))
        joined, head = self._joined_head(self.key_of(rpath))
        if not joined.pieces:
            raise TransportError(
                f"S3 cannot set the time of {rpath}: no such object",
                expected="an object",
                found="nothing",
                fix="sync again",
            )
        last = joined.pieces[-1].key  # the base only when there are no parts: its ETag stays the parts' tie
        meta = self._meta(joined, head)
        meta["rla-mtime"] = repr(float(mtime))
        self.client.copy(last, last, metadata=meta)

    def fork(self) -> "S3Transport":
        """Another transport on the same session (s3fs clients are safe to share)."""
        twin = object.__new__(S3Transport)
        Transport.__init__(twin)
        twin.client, twin.prefix, twin._listed = self.client, self.prefix, self._listed
        return twin

    def __repr__(self) -> str:
        return f"S3Transport({self.client.where!r}, prefix={self.prefix!r})"
