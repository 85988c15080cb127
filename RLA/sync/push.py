"""Pushing one run: carry out the planned steps with temp names, appends and verification."""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from typing import IO, Dict, List, Optional

from RLA.errors import TransportError
from RLA.layout import RunLayout
from RLA.sync.base import CHUNK, Transport, WriteResult
from RLA.sync.manifest import FileRecord, Pending, RunManifest
from RLA.sync.planner import Action, LocalFile, Step, is_append_only
from RLA.sync.runfiles import key_path, open_local, part_name

#: Files from this size on are recorded as in flight and resumed after an interruption;
#: smaller ones are simply sent again.
RESUMABLE_SIZE = 1024 * 1024


@dataclass
class RunPushResult:
    """What pushing one run did."""

    sent: List[str] = field(default_factory=list)
    appended: List[str] = field(default_factory=list)
    deleted: List[str] = field(default_factory=list)
    changed_while_sending: List[str] = field(default_factory=list)


class _Hashing:
    """A reader that feeds every byte it returns into ``digest``."""

    def __init__(self, source: IO[bytes], digest: "hashlib._Hash") -> None:
        self.source, self.digest = source, digest

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        self.digest.update(data)
        return data


def _hash_prefix(handle: IO[bytes], length: int) -> "hashlib._Hash":
    digest = hashlib.sha256()
    left = length
    while left > 0:
        data = handle.read(min(CHUNK, left))
        if not data:
            break
        digest.update(data)
        left -= len(data)
    return digest


def _verify(rpath: str, result: WriteResult, size: int) -> None:
    if result.size != size:
        raise TransportError(
            f"Remote file {rpath} has the wrong size after the transfer",
            expected=f"{size} bytes",
            found=f"{result.size} bytes",
            fix="sync again; the transfer is resumed",
        )


def push_run(
    transport: Transport,
    layout: RunLayout,
    remote: RunLayout,
    files: Dict[str, LocalFile],
    steps: List[Step],
    manifest: RunManifest,
) -> RunPushResult:
    """Apply ``steps`` for one run and record each completed file in the manifest.

    The manifest is saved when the run is done or fails, and right after every large file:
    after a SIGKILL only small files may be sent once more (through a temporary name, so
    harmlessly), while large ones are never sent twice.

    Raises:
        TransportError: a transfer failed (the manifest still describes what is complete).
    """
    result = RunPushResult()
    try:
        for step in steps:
            _push_step(transport, remote, files, step, manifest, result)
    finally:
        manifest.save()
    return result


def _push_step(
    transport: Transport,
    remote: RunLayout,
    files: Dict[str, LocalFile],
    step: Step,
    manifest: RunManifest,
    result: RunPushResult,
) -> None:
    rpath = key_path(remote, step.key)
    if step.action is Action.DELETE:
        transport.remove(rpath)
        manifest.files.pop(step.key, None)
        result.deleted.append(step.key)
        return
    local = files[step.key]
    record: Optional[FileRecord] = None
    if step.action is Action.APPEND:
        record = _append(transport, rpath, local, manifest.files[step.key], step.offset)
        if record is not None:
            result.appended.append(step.key)
    if record is None:
        transport.makedirs(posixpath.dirname(rpath))
        record = _upload(transport, rpath, local, step, manifest)
        if record is not None:
            result.sent.append(step.key)
    if record is None:
        result.changed_while_sending.append(step.key)
        return
    manifest.files[step.key] = record
    if manifest.pending is not None and manifest.pending.key == step.key:
        manifest.pending = None
    if local.size >= RESUMABLE_SIZE:
        manifest.save()


def _append(
    transport: Transport, rpath: str, local: LocalFile, old: FileRecord, offset: int
) -> Optional[FileRecord]:
    """Send the new tail; ``None`` if the prefix changed (the caller uploads in full)."""
    with open_local(local.lpath, local.identity) as handle:
        digest = _hash_prefix(handle, offset)
        if digest.hexdigest() != old.sha256:
            return None  # not an append: the file was rewritten (e.g. a new CSV column)
        length = local.size - offset
        # expect_size: the remote must still hold exactly what we sent (not, say, a
        # partial append of a killed sync); otherwise the caller uploads the whole file.
        result = transport.send(
            rpath,
            _Hashing(handle, digest),
            offset,
            length,
            mtime=local.mtime_ns / 1e9,
            expect_size=offset,
            mode=local.mode,
        )
    if result.sent == 0 and result.size != offset:
        return None
    if result.sent != length:
        return None
    _verify(rpath, result, local.size)
    return FileRecord(local.size, local.mtime_ns, digest.hexdigest(), local.mode)


def _upload(
    transport: Transport, rpath: str, local: LocalFile, step: Step, manifest: RunManifest
) -> Optional[FileRecord]:
    """Whole file to a temporary name (resumed if possible), verified, then renamed.

    Where the transport publishes the whole file atomically (one object PUT), it is written
    in place: no reader can see it half written either way.
    """
    direct = step.action is not Action.RESUME and local.size <= transport.atomic_write_limit
    tmp = rpath if direct else part_name(rpath)
    offset = 0
    if step.action is Action.RESUME:
        partial = transport.stat(tmp)
        if partial is not None and partial.size <= local.size:
            offset = partial.size
    if local.size >= RESUMABLE_SIZE:  # worth resuming after a kill: remember it is in flight
        manifest.pending = Pending(step.key, local.size, local.mtime_ns)
        manifest.save()
    with open_local(local.lpath, local.identity) as handle:
        now = os.fstat(handle.fileno())
        # A growing append-only file is sent up to its listed size (a consistent prefix);
        # any other file rewritten since it was listed waits for the next sync.
        if now.st_size < local.size or (now.st_mtime_ns != local.mtime_ns and not is_append_only(step.key)):
            return None
        digest = _hash_prefix(handle, offset)
        length = local.size - offset
        # The mode is set before the first byte is written (a 0600 file stays 0600 on the way).
        result = transport.send(
            tmp, _Hashing(handle, digest), offset, length, mtime=local.mtime_ns / 1e9, mode=local.mode
        )
    if result.sent != length:
        return None
    _verify(tmp, result, local.size)
    if not direct:
        transport.rename(tmp, rpath)
    return FileRecord(local.size, local.mtime_ns, digest.hexdigest(), local.mode)
