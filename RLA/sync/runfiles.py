"""A run's files as sync keys: local walk, remote walk and key → path mapping.

A key is ``<data_type>/<path inside the run's directory>``; the ``archive_tester`` state,
a single file, is the key ``archive_tester``. The same key names a file on both sides, so
a pushed run has exactly the layout of a local one.
"""
from __future__ import annotations

import os
import posixpath
from typing import Dict, Iterable, Tuple

from RLA.layout import ARCHIVE_TESTER, RunLayout
from RLA.sync.base import Transport
from RLA.sync.planner import LocalFile, RemoteFile

#: Suffix of temporary remote (and local, on pull) files; hidden by a leading dot.
PART_SUFFIX = ".rla-part"


def is_transient(name: str) -> bool:
    """Temporary files of atomic writes and interrupted transfers are never synced."""
    return name.endswith(PART_SUFFIX) or (name.startswith(".") and name.endswith(".tmp"))


def part_name(path: str) -> str:
    """The temporary name a file is transferred under before its rename."""
    head, tail = posixpath.split(path)
    return posixpath.join(head, f".{tail}{PART_SUFFIX}")


def key_path(layout: RunLayout, key: str) -> str:
    """The path of ``key`` under ``layout`` (local or remote: ``layout.data_root`` decides)."""
    data_type, _, inner = key.partition("/")
    base = layout.path(data_type).as_posix()
    return posixpath.join(base, inner) if inner else base


def _scan(directory: str, prefix: str, out: Dict[str, LocalFile]) -> None:
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.is_dir():
            _scan(entry.path, f"{prefix}{entry.name}/", out)
        elif not is_transient(entry.name):
            try:
                st = entry.stat()
            except FileNotFoundError:  # removed while we looked (checkpoint rotation)
                continue
            out[f"{prefix}{entry.name}"] = LocalFile(entry.path, st.st_size, st.st_mtime_ns)


def local_files(layout: RunLayout, data_types: Iterable[str]) -> Dict[str, LocalFile]:
    """Every syncable file of the run on this machine."""
    out: Dict[str, LocalFile] = {}
    for data_type in data_types:
        path = layout.path(data_type)
        if data_type == ARCHIVE_TESTER:
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            out[ARCHIVE_TESTER] = LocalFile(os.fspath(path), st.st_size, st.st_mtime_ns)
        else:
            _scan(os.fspath(path), f"{data_type}/", out)
    return out


def remote_files(transport: Transport, layout: RunLayout,
                 data_types: Iterable[str]) -> Dict[str, RemoteFile]:
    """Every file of the run on the remote side (``layout`` rooted at the remote root)."""
    out: Dict[str, RemoteFile] = {}
    for data_type in data_types:
        if data_type == ARCHIVE_TESTER:
            found = transport.stat(key_path(layout, ARCHIVE_TESTER))
            if found is not None:
                out[ARCHIVE_TESTER] = RemoteFile(found.size, found.mtime)
            continue
        for rel, entry in transport.walk(key_path(layout, data_type)):
            if not is_transient(posixpath.basename(rel)):
                out[f"{data_type}/{rel}"] = RemoteFile(entry.size, entry.mtime)
    return out


def split_key(key: str) -> Tuple[str, str]:
    """``(data_type, inner path)`` of a key."""
    data_type, _, inner = key.partition("/")
    return data_type, inner
