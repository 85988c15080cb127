"""The store-side catalog's format: per-run entries, the objects that hold them, and their checks.

Every push to an object store publishes, after the run files themselves, a small summary
of each run it changed (an *entry*): the text of the few files the query reads besides
the curves (``run.json``, ``parameter.json``, ``backup.txt``, the ``archive_tester``
JSON, with their modification times) and the summary of ``progress.csv`` the query index
keeps (rows, last time-step, last/min/max of every metric). Entries live in immutable
gzip'ed JSON objects below ``<root>/.rla-catalog/``: ``entries/<stamp>-<nonce>.json.gz``
(one per push) and ``shards/<stamp>-<nonce>.json.gz`` (compacted), active runs under ``runs``
and archived ones (``arc/``) under ``archived``. A run's newest entry (largest ``stamp``)
wins. The object ``generation`` is rewritten last by every push, so its ETag tells a reader
whether anything changed; it says whether the catalog lists every run of the store, the
archived ones included (``complete`` and ``archived``).

Everything read back is remote input: :func:`parse_object` checks every run name, key and
field and raises :class:`CatalogError` on anything else, before a local path is built.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from RLA.errors import SyncError, UnsafePathError
from RLA.safe_read import MAX_JSON_DEPTH, nesting_depth
from RLA.sync.remote_names import check_run

#: The catalog's folder below the store's data root (hidden: never a task, never walked).
FOLDER = ".rla-catalog"
GENERATION = "generation"
ENTRIES = "entries"
SHARDS = "shards"
VERSION = 1
#: Names of catalog objects (``<ns stamp>-<nonce>.json.gz``); other keys below the folder are ignored.
OBJECT_NAME = re.compile(r"[0-9]{19}-[0-9a-f]{16}\.json\.gz")
#: The run files an entry may carry as text (sync keys).
SMALL_KEYS = ("log/run.json", "code/parameter.json", "log/backup.txt", "archive_tester")
PROGRESS_KEY = "log/progress.csv"
#: Keys a reader may be told to fetch from the store (not summarized by the pusher).
FETCH_KEYS = (*SMALL_KEYS, PROGRESS_KEY)
#: Largest small file carried as text (bigger ones are fetched by the reader).
MAX_TEXT = 1 << 20
#: Largest catalog object a reader inflates (bytes of JSON).
MAX_OBJECT = 256 << 20
MAX_NAME = 1000
#: Longest run place (``task/YYYY/MM/DD/name``, UTF-8 bytes): its cached files' paths stay
#: within every file system's path limit (4,096 bytes on Linux) below a cache folder.
MAX_RELATIVE = 1024
#: Latest file time an entry may give (9999-12-31, within every platform's ``time_t``).
MAX_TIME = 253402300799.0
#: Largest row count an entry may give (the index stores it as a 64-bit integer).
MAX_ROWS = (1 << 63) - 1


class CatalogError(SyncError):
    """A catalog object on the store is not what a push writes (damaged or crafted)."""


@dataclass
class Entry:
    """One run as the catalog describes it.

    Attributes:
        relative: ``<task>/<YYYY>/<MM>/<DD>/<name>``.
        archived: the run lives under ``arc/``.
        stamp: when the pusher read the run (the newest entry of a run wins).
        texts: sync key → ``(text, mtime)`` of the small files.
        progress: ``{"n_rows", "time_step", "metrics"}`` of ``progress.csv`` (``None``: none).
        progress_mtime: modification time of ``progress.csv`` on the pusher.
        fetch: sync keys the reader downloads from the store instead.
    """

    relative: str
    stamp: float
    texts: Dict[str, Tuple[str, Optional[float]]] = field(default_factory=dict)
    progress: Optional[Dict[str, Any]] = None
    progress_mtime: Optional[float] = None
    fetch: List[str] = field(default_factory=list)
    archived: bool = False

    @property
    def key(self) -> str:
        """The run's key in the query's index (``arc:`` before an archived run's place)."""
        return ("arc:" if self.archived else "") + self.relative

    def to_json(self) -> Dict[str, Any]:
        return {
            "stamp": self.stamp,
            "texts": {k: [t, m] for k, (t, m) in sorted(self.texts.items())},
            "progress": self.progress,
            "progress_mtime": self.progress_mtime,
            "fetch": list(self.fetch),
        }


def _bad(where: str, what: str, found: object) -> CatalogError:
    return CatalogError(
        f"The store's catalog is damaged: {where}",
        expected=what,
        found=repr(found)[:200],
        fix=f"push again from a worker (it rewrites the catalog), or delete {FOLDER}/ on the store "
        "to read it by listing",
    )


def _number(value: object, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(where, "a finite number", value)
    if not low <= value <= high:
        raise _bad(where, f"a number from {low} to {high}", value)
    return float(value)


def _mtime(value: object, where: str) -> Optional[float]:
    return None if value is None else _number(value, where, 0.0, MAX_TIME)


def _utf8(value: str, where: str) -> str:
    """``value`` when it is UTF-8 text (``"\\ud800"`` is valid JSON, but no file or index holds it)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad(where, "UTF-8 text", "a lone surrogate") from None
    return value


def check_relative_run(relative: object) -> str:
    """``relative`` when it names a run in the layout (``task/YYYY/MM/DD/name``), else CatalogError."""
    if not isinstance(relative, str) or relative.count("/") < 4:
        raise _bad("a run's place", "task/YYYY/MM/DD/name", relative)
    if len(relative.encode("utf-8", "surrogatepass")) > MAX_RELATIVE:
        raise _bad(
            f"the run {relative[:200]!r}", f"a run place of at most {MAX_RELATIVE} bytes", len(relative)
        )
    parts = relative.split("/")
    try:
        check_run("/".join(parts[:-4]), "/".join(parts[-4:-1]), parts[-1])
    except UnsafePathError as exc:
        raise _bad(f"the run {relative[:200]!r}", "a run name in the RLA layout", exc.problem) from None
    return relative


def _progress(value: object, where: str) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"n_rows", "time_step", "metrics"}:
        raise _bad(where, "{n_rows, time_step, metrics}", value)
    from RLA.logger.readers import MAX_COLUMNS  # the query's own limit (imported when reading)

    rows, metrics = value["n_rows"], value["metrics"]
    if isinstance(rows, bool) or not isinstance(rows, int) or not 0 <= rows <= MAX_ROWS:
        raise _bad(where, f"a row count from 0 to {MAX_ROWS}", rows)
    if not isinstance(metrics, dict) or len(metrics) > MAX_COLUMNS:
        raise _bad(where, f"a mapping of at most {MAX_COLUMNS} metrics", type(metrics).__name__)
    out: Dict[str, List[float]] = {}
    for name, stats in metrics.items():
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            raise _bad(where, "metric names of 1 to 1000 characters", name)
        _utf8(name, f"{where} metric names")
        if not isinstance(stats, list) or len(stats) != 3:
            raise _bad(f"{where} {name!r}", "[last, min, max]", stats)
        out[name] = [_number(v, f"{where} {name!r}") for v in stats]
    return {"n_rows": rows, "time_step": _number(value["time_step"], where), "metrics": out}


def _text(value: object, where: str) -> str:
    """A carried file's text: a string of at most :data:`MAX_TEXT` characters that is UTF-8 text."""
    if not isinstance(value, str):
        raise _bad(where, "[text, mtime]", value)
    if len(value) > MAX_TEXT:
        raise _bad(where, f"at most {MAX_TEXT} characters", len(value))
    return _utf8(value, where)


def parse_entry(relative: object, raw: object, archived: bool = False) -> Entry:
    """One checked entry (see :class:`Entry`).

    Raises:
        CatalogError: a crafted name, an unknown key, a field of the wrong type or size.
    """
    rel = check_relative_run(relative)
    where = f"the entry of {'arc/' if archived else ''}{rel}"
    if not isinstance(raw, dict) or set(raw) != {"stamp", "texts", "progress", "progress_mtime", "fetch"}:
        raise _bad(where, "{stamp, texts, progress, progress_mtime, fetch}", raw)
    texts, fetch = raw["texts"], raw["fetch"]
    if not isinstance(texts, dict) or not set(texts) <= set(SMALL_KEYS):
        raise _bad(where, f"texts of {', '.join(SMALL_KEYS)} only", texts)
    entry = Entry(rel, _number(raw["stamp"], where, 0.0), archived=archived)
    for key, pair in texts.items():
        if not isinstance(pair, list) or len(pair) != 2:
            raise _bad(f"{where} {key}", "[text, mtime]", pair)
        entry.texts[key] = (_text(pair[0], f"{where} {key}"), _mtime(pair[1], f"{where} {key}"))
    if not isinstance(fetch, list) or not all(k in FETCH_KEYS for k in fetch) or len(fetch) > len(FETCH_KEYS):
        raise _bad(where, f"keys to fetch among {', '.join(FETCH_KEYS)}", fetch)
    entry.fetch = sorted(set(fetch) - set(texts))
    entry.progress = _progress(raw["progress"], f"{where} progress")
    entry.progress_mtime = _mtime(raw["progress_mtime"], f"{where} progress time")
    return entry


def dump_object(entries: List[Entry]) -> bytes:
    """The bytes of one catalog object holding ``entries`` (gzip'ed JSON: a push sends few bytes)."""
    body: Dict[str, Any] = {"version": VERSION, "runs": {}, "archived": {}}
    for entry in entries:
        body["archived" if entry.archived else "runs"][entry.relative] = entry.to_json()
    return gzip.compress(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), mtime=0)


def check_size(size: int, name: str) -> None:
    """Refuse to download a catalog object larger than :data:`MAX_OBJECT` bytes."""
    if size > MAX_OBJECT:
        raise _bad(name, f"at most {MAX_OBJECT} bytes", f"{size} bytes")


def _inflate(data: bytes, name: str) -> bytes:
    """The JSON text of a gzip'ed object, at most :data:`MAX_OBJECT` bytes (no decompression bomb)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        text = inflater.decompress(data, MAX_OBJECT + 1)
    except zlib.error as exc:
        raise _bad(name, "gzip'ed JSON", str(exc)) from None
    if len(text) > MAX_OBJECT or not inflater.eof:
        raise _bad(name, f"at most {MAX_OBJECT} bytes of JSON once inflated", "more, or a cut stream")
    return text


def parse_object(data: bytes, name: str) -> List[Entry]:
    """The entries of the catalog object ``name`` (its bytes checked whole).

    Raises:
        CatalogError: not a catalog object of this version, or any entry refused.
    """
    data = _inflate(data, name)
    if nesting_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise _bad(name, f"JSON nested at most {MAX_JSON_DEPTH} levels", "deeper")
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _bad(name, "JSON text", str(exc)) from None
    if (
        not isinstance(body, dict)
        or body.get("version") != VERSION
        or not isinstance(body.get("runs"), dict)
        or not isinstance(body.get("archived", {}), dict)
    ):
        raise _bad(name, f'{{"version": {VERSION}, "runs": {{...}}, "archived": {{...}}}}', str(body)[:100])
    return [parse_entry(rel, raw) for rel, raw in body["runs"].items()] + [
        parse_entry(rel, raw, archived=True) for rel, raw in body.get("archived", {}).items()
    ]


def newest(entries: List[Entry]) -> Dict[str, Entry]:
    """Each run's newest entry by :attr:`Entry.key` (largest stamp; equal stamps: the later in ``entries``)."""
    out: Dict[str, Entry] = {}
    for entry in entries:
        held = out.get(entry.key)
        if held is None or entry.stamp >= held.stamp:
            out[entry.key] = entry
    return out


def parse_generation(data: bytes) -> bool:
    """Whether the catalog lists every run of the store, archived ones too (``complete`` and
    ``archived`` of the generation object; one written before archived runs were catalogued
    has no ``archived``: not complete, so the store is listed until a push checks it again).

    Raises:
        CatalogError: not a generation object.
    """
    try:
        body = json.loads(data.decode("utf-8")) if len(data) < 4096 else None
    except (UnicodeDecodeError, ValueError):
        body = None
    if (
        not isinstance(body, dict)
        or body.get("version") != VERSION
        or not isinstance(body.get("complete"), bool)
        or not isinstance(body.get("archived", False), bool)
    ):
        raise _bad(GENERATION, '{"version": 1, "complete": true|false, "archived": true, ...}', data[:100])
    return bool(body["complete"]) and body.get("archived") is True
