"""Serve a file of the database: only from inside the data root, never through a link.

The path a request names is relative to the data root; :func:`RLA.safe_paths.safe_join`
refuses ``..``, absolute paths, control characters and any symbolic link on the way, and
checks the resolved path is inside the root. Only images, videos and plain text are shown
inline; everything else is a download. Every file response forbids scripts
(``Content-Security-Policy: sandbox``), so an HTML or SVG file written by a run cannot act
as the dashboard.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path
from typing import Dict, Tuple

from RLA.errors import RunNotFoundError
from RLA.safe_paths import safe_join

INLINE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
    "video/mp4",
    "video/webm",
    "video/ogg",
    "text/plain",
    "text/csv",
    "application/json",
)
TEXT_SUFFIXES = {".txt", ".log", ".csv", ".json", ".yaml", ".yml", ".py", ".patch", ".diff", ".md", ".sh"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; media-src 'self'; "
    "style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


def resolve_file(data_root: os.PathLike, relative: str) -> Path:
    """The regular file ``relative`` names inside ``data_root``.

    Raises:
        UnsafePathError: ``..``, an absolute path, a link on the way, or outside the root.
        RunNotFoundError: no such regular file.
    """
    path = safe_join(Path(data_root).resolve(), relative, "file path")
    if not path.is_file():
        raise RunNotFoundError(
            f"No file {relative!r} in the data root",
            expected="an existing file",
            found="nothing (or a folder)",
            fix="pick a file from the run page",
        )
    return path


def file_headers(path: Path) -> Tuple[str, Dict[str, str]]:
    """``(media type, headers)``: inline for images/videos/text, else an attachment."""
    media, _ = mimetypes.guess_type(path.name)
    if path.suffix.lower() in TEXT_SUFFIXES:
        media = "text/plain; charset=utf-8"
    headers = dict(SECURITY_HEADERS)
    if media is None or media.split(";")[0] not in INLINE_TYPES:
        media = "application/octet-stream"
        safe_name = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in path.name)
        headers["Content-Disposition"] = f'attachment; filename="{safe_name}"'
    return media, headers
