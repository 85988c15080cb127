"""Read a database in place on the main node (``s3://``, ``sftp://``, ``file://`` URLs).

``rla list / view / plot / ui --data-root s3://bucket/prefix`` work on a local *cache* of
the store: a folder that mirrors what the query reads (``run.json``, ``parameter.json``,
``progress.csv`` with its appended parts joined, the other files of the ``log``, ``code``
and ``archive_tester`` data types up to :data:`MAX_CACHED_FILE` bytes). Checkpoints,
replay snapshots and results stay on the store. Before each command the cache is brought
up to date from the store's listings (size and time of every object; unchanged files
cost nothing but the listing) through the pull code, with the same checks of every name,
and runs gone from the store leave the cache. The SQLite index of the query lives in the
cache, on local disk, never on the store.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence
from urllib.parse import unquote, urlsplit

from RLA.config.fields import validate_section
from RLA.config.remote import RemoteSettings
from RLA.errors import ConfigError
from RLA.layout import iter_run_dirs
from RLA.safe_paths import inside
from RLA.sync.syncer import RunSyncer

#: Data types copied into the cache (what the query, view and plot read).
MIRRORED_TYPES = ("log", "code", "archive_tester")
#: Files larger than this stay on the store (a huge log is not needed to list runs).
MAX_CACHED_FILE = 64 * 1024 * 1024
#: Overrides the cache folder (default ``~/.cache/rla``).
CACHE_ENV = "RLA_CACHE_DIR"
SCHEMES = ("s3", "sftp", "file")


def is_url(text: object) -> bool:
    """Whether ``text`` names a data root by URL (``s3://``, ``sftp://``, ``file://``)."""
    return isinstance(text, str) and urlsplit(text).scheme in SCHEMES and "://" in text


def settings_for(url: str, base: Optional[RemoteSettings] = None) -> RemoteSettings:
    """The ``REMOTE_SETTING`` that reaches ``url``; endpoint, keys and profile come from ``base``
    (the project's section) when it names the same bucket or host.

    Raises:
        ConfigError: not an ``s3://`` or ``sftp://`` URL, or no bucket/host in it.
    """
    parts = urlsplit(url)
    path = unquote(parts.path)
    if parts.scheme == "s3" and parts.netloc:
        same = base is not None and base.file_transfer_protocol == "s3" and base.bucket == parts.netloc
        raw: dict = {"file_transfer_protocol": "s3", "bucket": parts.netloc, "prefix": path.strip("/")}
        if same:
            raw.update({k: getattr(base, k) for k in ("endpoint_url", "region", "profile", "timeout", "retries")})
    elif parts.scheme == "sftp" and parts.hostname:
        same = base is not None and base.file_transfer_protocol == "sftp" and base.ftp_server == parts.hostname
        raw = {"file_transfer_protocol": "sftp", "ftp_server": parts.hostname, "port": parts.port,
               "username": parts.username, "remote_data_root": path or "/"}
        if same:
            raw.update({k: getattr(base, k) for k in ("key_filename", "known_hosts", "allow_agent",
                                                       "host_key_policy", "timeout", "retries")})
    else:
        raise ConfigError(f"Cannot read the data root {url!r}", expected="s3://BUCKET/PREFIX, "
                          "sftp://[USER@]HOST[:PORT]/PATH or file:///PATH", found=url,
                          fix="check the URL given to --data-root")
    return validate_section(RemoteSettings, {k: v for k, v in raw.items() if v is not None}, url,
                            prefix="REMOTE_SETTING.")


def cache_dir(settings: RemoteSettings, base: Optional[Path] = None) -> Path:
    """The local folder that mirrors the store named by ``settings`` (one per store and root)."""
    root = base or Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "rla")
    where = f"{settings.file_transfer_protocol}|{settings.address()}|{settings.port}|{settings.username}|" \
            f"{settings.data_root_on_remote()}"
    return Path(root) / settings.file_transfer_protocol / hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]


def refresh(settings: RemoteSettings, cache: Path, warn: Optional[Callable[[str], None]] = None,
            connect: Optional[Callable[[], Any]] = None) -> Path:
    """Bring ``cache`` up to date with the store; returns it (a data root for the query)."""
    cache.mkdir(parents=True, exist_ok=True)
    seen: List[str] = []

    def remember(runs: Sequence[Any], _total: int) -> Sequence[Any]:
        seen.extend(run.relative for run in runs)
        return runs

    syncer = RunSyncer(settings, cache, data_types=MIRRORED_TYPES, warn=warn, connect=connect,
                       max_file_size=min(settings.max_file_size or MAX_CACHED_FILE, MAX_CACHED_FILE))
    syncer.pull(progress=remember)
    _prune(cache, set(seen))
    return cache


def _prune(cache: Path, present: set) -> None:
    """Remove from the cache the runs the store no longer holds."""
    for run in list(iter_run_dirs(cache)):
        if run.relative in present:
            continue
        for data_type in MIRRORED_TYPES:
            path = run.path(data_type)
            inside(cache, path)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_file():
                path.unlink()


def open_data_root(url: str, settings: Optional[RemoteSettings] = None, base: Optional[RemoteSettings] = None,
                   cache: Optional[Path] = None, warn: Optional[Callable[[str], None]] = None,
                   connect: Optional[Callable[[], Any]] = None) -> Path:
    """A local data root to query for ``url``: the folder itself for ``file://``, else the refreshed cache.

    Args:
        url: ``s3://bucket/prefix``, ``sftp://user@host:port/path`` or ``file:///path``.
        settings: how to reach the store (default: built from the URL and ``base``).
        base: the project's ``REMOTE_SETTING`` (endpoint, profile, SSH key of the same store).
        cache: the cache folder (default: :func:`cache_dir`).
    """
    if urlsplit(url).scheme == "file":
        return Path(unquote(urlsplit(url).path))
    settings = settings or settings_for(url, base)
    return refresh(settings, cache or cache_dir(settings), warn=warn, connect=connect)
