"""Read a database in place on the main node (``s3://``, ``sftp://``, ``file://`` URLs).

``rla list / view / plot / ui --data-root s3://bucket/prefix`` work on a local *cache* of
the store: a folder that mirrors what the query reads (``run.json``, ``parameter.json``,
``progress.csv`` with its appended parts joined, the other files of the ``log``, ``code``
and ``archive_tester`` data types up to :data:`MAX_CACHED_FILE` bytes). Checkpoints,
replay snapshots and results stay on the store. Before each command the cache is brought
up to date from one recursive listing of the store per data type (ETag, size and time of
every object; unchanged files cost nothing but the listing, changed ones are fetched
several at a time) through the pull code, with the same checks of every name, and runs
and files gone from the store leave the cache (:mod:`RLA.sync.store_mirror`). The SQLite
index of the query lives in the cache, on local disk, never on the store.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, List, Optional
from urllib.parse import unquote, urlsplit

from RLA.config.fields import validate_section
from RLA.config.remote import RemoteSettings
from RLA.errors import ConfigError
from RLA.layout import iter_run_dirs
from RLA.safe_paths import inside
from RLA.sync.catalog_modes import by_catalog, files_generation, save_files_generation
from RLA.sync.report import SyncReport
from RLA.sync.store_mirror import load_state, mirror
from RLA.sync.syncer import RunSyncer

#: Data types copied into the cache (what the query, view and plot read).
MIRRORED_TYPES = ("log", "code", "archive_tester")
#: Files larger than this stay on the store (a huge log is not needed to list runs).
MAX_CACHED_FILE = 64 * 1024 * 1024
#: Overrides the cache folder (default ``~/.cache/rla``).
CACHE_ENV = "RLA_CACHE_DIR"
SCHEMES = ("s3", "sftp", "file")
#: Seconds a refresh is trusted without asking the store again (0: every command lists it).
MAX_AGE_ENV = "RLA_REMOTE_MAX_AGE"
DEFAULT_MAX_AGE = 0.0
#: ``0`` reads an object store by listing it even when it has a catalog.
CATALOG_ENV = "RLA_REMOTE_CATALOG"


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
            raw.update(
                {k: getattr(base, k) for k in ("endpoint_url", "region", "profile", "timeout", "retries")}
            )
    elif parts.scheme == "sftp" and parts.hostname:
        same = (
            base is not None and base.file_transfer_protocol == "sftp" and base.ftp_server == parts.hostname
        )
        raw = {
            "file_transfer_protocol": "sftp",
            "ftp_server": parts.hostname,
            "port": parts.port,
            "username": parts.username,
            "remote_data_root": path or "/",
        }
        if same:
            raw.update(
                {
                    k: getattr(base, k)
                    for k in (
                        "key_filename",
                        "known_hosts",
                        "allow_agent",
                        "host_key_policy",
                        "timeout",
                        "retries",
                    )
                }
            )
    else:
        raise ConfigError(
            f"Cannot read the data root {url!r}",
            expected="s3://BUCKET/PREFIX, sftp://[USER@]HOST[:PORT]/PATH or file:///PATH",
            found=url,
            fix="check the URL given to --data-root",
        )
    return validate_section(
        RemoteSettings, {k: v for k, v in raw.items() if v is not None}, url, prefix="REMOTE_SETTING."
    )


def cache_dir(settings: RemoteSettings, base: Optional[Path] = None) -> Path:
    """The local folder that mirrors the store named by ``settings`` (one per store and root)."""
    root = base or Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "rla")
    where = (
        f"{settings.file_transfer_protocol}|{settings.address()}|{settings.port}|{settings.username}|"
        f"{settings.data_root_on_remote()}"
    )
    return (
        Path(root) / settings.file_transfer_protocol / hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]
    )


def max_age_from_env() -> float:
    """Seconds a refresh is trusted (``$RLA_REMOTE_MAX_AGE``; default :data:`DEFAULT_MAX_AGE`).

    Raises:
        ConfigError: not a number of seconds >= 0.
    """
    raw = os.environ.get(MAX_AGE_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_AGE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ConfigError(
            f"{MAX_AGE_ENV}={raw!r} is not a number of seconds",
            expected="a number >= 0",
            found=repr(raw),
            fix=f"unset {MAX_AGE_ENV} or set it to e.g. 0 or 30",
        )
    return value


def _fresh(cache: Path, where: str, max_age: float) -> bool:
    """Whether the cache was refreshed from ``where`` less than ``max_age`` seconds ago."""
    if max_age <= 0:
        return False
    state = load_state(cache)
    listed_at = state.get("listed_at")
    return (
        state.get("where") == where
        and isinstance(listed_at, (int, float))
        and 0 <= time.time() - listed_at < max_age
    )


def catalog_enabled() -> bool:
    """Whether an object store's catalog may be read (``$RLA_REMOTE_CATALOG`` is not ``0``)."""
    return os.environ.get(CATALOG_ENV, "1").strip() != "0"


def refresh(
    settings: RemoteSettings,
    cache: Path,
    warn: Optional[Callable[[str], None]] = None,
    connect: Optional[Callable[[], Any]] = None,
    max_age: Optional[float] = None,
    files: bool = True,
) -> Path:
    """Bring ``cache`` up to date with the store; returns it (a data root for the query).

    An object store with a catalog (:mod:`RLA.sync.catalog_read`) costs one HEAD when no
    push happened since the last refresh. Otherwise, with ``files=False`` (what listing
    runs needs) the catalog's new entries are applied; with ``files=True`` (curves and
    logs too), and on stores without a catalog, one recursive listing per mirrored data
    type, then only the changed files are fetched (:func:`RLA.sync.store_mirror.mirror`).
    With ``max_age`` seconds (default ``$RLA_REMOTE_MAX_AGE``, else 0), a cache listed
    that recently is used as it is, without asking the store.
    """
    max_age = max_age_from_env() if max_age is None else max_age
    cache.mkdir(parents=True, exist_ok=True)
    syncer = RunSyncer(settings, cache, data_types=MIRRORED_TYPES, warn=warn, connect=connect)
    if _fresh(cache, syncer.where, max_age):
        return cache
    limit = min(settings.max_file_size or MAX_CACHED_FILE, MAX_CACHED_FILE)
    refuse = syncer._refuser("pull")  # noqa: SLF001 - the syncer's warn-once reporting
    report = SyncReport("pull", syncer.where)
    seen: List[Optional[set]] = [None]
    use_catalog = settings.file_transfer_protocol == "s3" and catalog_enabled()

    def work(transport: Any) -> None:
        if use_catalog:
            done, present = by_catalog(transport, syncer.remote_root, cache, syncer.where, limit, files)
            if done:
                seen[0] = None if present is None else set(present)
                return
        generation = files_generation(transport, syncer.remote_root) if use_catalog else None
        result = mirror(
            transport, syncer.remote_root, cache, MIRRORED_TYPES, limit, refuse, where=syncer.where
        )
        seen[0] = set(result.runs)
        if generation is not None:
            save_files_generation(cache, syncer.where, generation)

    syncer._with_retries(work, report, "bytes_received")  # noqa: SLF001 - same retries as rla sync pull
    if seen[0] is not None:
        _prune(cache, seen[0])
    return cache


def _prune(cache: Path, present: set) -> None:
    """Remove from the cache the runs the store no longer holds (``present``: their keys,
    ``arc:`` before archived runs)."""
    found = {
        ("arc:" if archived else "") + run.relative: run
        for archived in (False, True)
        for data_type in MIRRORED_TYPES
        for run in iter_run_dirs(cache, data_type, archived=archived)
    }
    for key, run in sorted(found.items()):
        if key in present:
            continue
        for data_type in MIRRORED_TYPES:
            path = run.path(data_type)
            inside(cache, path)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_file():
                path.unlink()


def open_data_root(
    url: str,
    settings: Optional[RemoteSettings] = None,
    base: Optional[RemoteSettings] = None,
    cache: Optional[Path] = None,
    warn: Optional[Callable[[str], None]] = None,
    connect: Optional[Callable[[], Any]] = None,
    max_age: Optional[float] = None,
    files: bool = True,
) -> Path:
    """A local data root to query for ``url``: the folder itself for ``file://``, else the refreshed cache.

    Args:
        url: ``s3://bucket/prefix``, ``sftp://user@host:port/path`` or ``file:///path``.
        settings: how to reach the store (default: built from the URL and ``base``).
        base: the project's ``REMOTE_SETTING`` (endpoint, profile, SSH key of the same store).
        cache: the cache folder (default: :func:`cache_dir`).
        max_age: trust a refresh this many seconds old (default ``$RLA_REMOTE_MAX_AGE``, else 0).
        files: bring the curves and logs too (``False``: only what listing runs needs, which
            an object store's catalog answers without listing the store).
    """
    if urlsplit(url).scheme == "file":
        return Path(unquote(urlsplit(url).path))
    settings = settings or settings_for(url, base)
    return refresh(
        settings, cache or cache_dir(settings), warn=warn, connect=connect, max_age=max_age, files=files
    )
