"""The per-run sync manifest: what was last sent to one target (path, size, mtime, hash).

A manifest lives on the worker under ``<data_root>/.rla_sync/<target>/<task>/<date>/<name>.json``
(hidden, so never listed as a run nor pushed). It records every file the target holds
completely and, while a file is in flight, the ``pending`` upload so that a sync killed at
any point resumes the temporary remote file instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Optional

from RLA.fs import atomic_write_json
from RLA.layout import RunLayout

MANIFEST_DIR = ".rla_sync"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class FileRecord:
    """A file as it was sent: its size, local mtime (ns), SHA-256 of the bytes sent and mode.

    ``mode`` is ``None`` in manifests written before modes were synced.
    """

    size: int
    mtime_ns: int
    sha256: str
    mode: Optional[int] = None


@dataclass(frozen=True)
class Pending:
    """An upload to a temporary remote name that has not been renamed yet."""

    key: str
    size: int
    mtime_ns: int


@dataclass
class RunManifest:
    """The sync state of one run for one target; :meth:`save` replaces the file atomically."""

    path: Path
    files: Dict[str, FileRecord] = field(default_factory=dict)
    pending: Optional[Pending] = None

    @classmethod
    def load(cls, path: Path) -> "RunManifest":
        """Read ``path``; a missing or unreadable manifest is empty (everything is re-sent)."""
        try:
            with open(path, "r", encoding="utf-8") as handle:
                raw = json.load(handle)
            files = {key: FileRecord(**rec) for key, rec in raw.get("files", {}).items()}
            pending = Pending(**raw["pending"]) if raw.get("pending") else None
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return cls(path)
        return cls(path, files, pending)

    def save(self) -> None:
        """Write the manifest (atomic; not fsync'ed: a killed process loses nothing)."""
        atomic_write_json(
            self.path,
            {
                "version": FORMAT_VERSION,
                "files": {key: asdict(rec) for key, rec in sorted(self.files.items())},
                "pending": asdict(self.pending) if self.pending else None,
            },
            durable=False,
        )


def target_id(
    protocol: str, host: Optional[str], port: Optional[int], username: Optional[str], remote_root: str
) -> str:
    """A short stable name for one sync target (no secret goes into it)."""
    text = f"{protocol}://{username or ''}@{host or ''}:{port or ''}/{remote_root.rstrip('/')}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def manifest_path(data_root: os.PathLike, target: str, layout: RunLayout) -> Path:
    """Where the manifest of ``layout`` for ``target`` is kept."""
    prefix = "arc/" if layout.archived else ""
    return Path(data_root) / MANIFEST_DIR / target / f"{prefix}{layout.relative}.json"
