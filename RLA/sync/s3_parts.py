"""How a growing file lives in an object store: a base object plus appended part objects.

Objects cannot be appended to. A file that grows is stored as its *base* object
``<key>`` and *part* objects ``<key>.rla-parts/<generation>-<offset>-<length>``, each
published by one atomic PUT. The generation is derived from the base object's ETag, so
replacing the base (a rewrite, or a compaction that folds the parts into a new base)
switches atomically to the new content: older parts stop counting at once and are
deleted afterwards. A reader joins the base and the parts of its generation that continue
it without a gap; whatever it sees is a complete earlier version of the file.

This module is pure (no I/O): names, joining and the compaction policy.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

#: Suffix of the folder holding a file's appended parts.
PARTS_SUFFIX = ".rla-parts"
_PART = re.compile(r"([0-9a-f]{12})-([0-9]{15})-([0-9]{1,15})")
#: A compaction is due when this many parts are joined to the base ...
MAX_PARTS = 64
#: ... or when at least this many parts together hold twice the base's bytes (geometric
#: growth of the base: every byte is re-uploaded a bounded number of times).
MIN_PARTS = 4
GROWTH = 2


@dataclass(frozen=True)
class ObjectInfo:
    """One listed object: its key, size, ETag and last modification (seconds)."""

    key: str
    size: int
    etag: str = ""
    mtime: Optional[float] = None


@dataclass(frozen=True)
class Joined:
    """A file as a reader sees it: the objects that make it (base first) and its size."""

    pieces: Tuple[ObjectInfo, ...]
    stale: Tuple[str, ...]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.pieces)

    @property
    def mtime(self) -> Optional[float]:
        times = [p.mtime for p in self.pieces if p.mtime is not None]
        return max(times) if times else None

    @property
    def parts(self) -> Tuple[ObjectInfo, ...]:
        return self.pieces[1:]

    @property
    def etag(self) -> str:
        """One identity for the joined content (the ETags of its pieces)."""
        return "+".join(p.etag.strip('"') for p in self.pieces)


def generation(etag: str) -> str:
    """The 12 hex digits that tie parts to one version of the base object."""
    return hashlib.sha256(etag.strip('"').encode("utf-8")).hexdigest()[:12]


def parts_prefix(key: str) -> str:
    """The key prefix of ``key``'s part objects."""
    return f"{key}{PARTS_SUFFIX}/"


def part_key(key: str, base_etag: str, offset: int, length: int) -> str:
    """The key of the part holding bytes ``offset .. offset+length`` of ``key``."""
    return f"{parts_prefix(key)}{generation(base_etag)}-{offset:015d}-{length}"


def parse_part(name: str) -> Optional[Tuple[str, int, int]]:
    """``(generation, offset, length)`` of a part's name, or ``None`` if it is no part."""
    match = _PART.fullmatch(name)
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def base_of(key: str) -> Optional[str]:
    """The base key a part key belongs to, or ``None`` for an ordinary key."""
    head, sep, tail = key.rpartition(f"{PARTS_SUFFIX}/")
    if not sep or "/" in tail:
        return None
    return head


def join(base: Optional[ObjectInfo], parts: Iterable[ObjectInfo]) -> Joined:
    """The file made of ``base`` and the parts that continue it (no base: no file).

    A part counts only when it belongs to the base's generation, starts exactly where the
    file ends so far and has the length its name says; every other part is stale.
    """
    parts = list(parts)
    if base is None:
        return Joined((), tuple(p.key for p in parts))
    gen = generation(base.etag)
    mine: List[Tuple[int, ObjectInfo]] = []
    stale: List[str] = []
    for part in parts:
        parsed = parse_part(part.key.rpartition("/")[2])
        if parsed is None or parsed[0] != gen or parsed[2] != part.size:
            stale.append(part.key)
        else:
            mine.append((parsed[1], part))
    pieces = [base]
    end = base.size
    for offset, part in sorted(mine, key=lambda item: item[0]):
        if offset == end and part.size > 0:
            pieces.append(part)
            end += part.size
        else:
            stale.append(part.key)
    return Joined(tuple(pieces), tuple(stale))


def should_compact(joined: Joined) -> bool:
    """Whether the parts of ``joined`` should be folded into a new base object."""
    parts = joined.parts
    if len(parts) >= MAX_PARTS:
        return True
    return len(parts) >= MIN_PARTS and sum(p.size for p in parts) >= GROWTH * joined.pieces[0].size


def group(objects: Iterable[ObjectInfo]) -> Dict[str, Joined]:
    """Every file of a recursive listing, joined (part objects folded into their base)."""
    bases: Dict[str, ObjectInfo] = {}
    parts: Dict[str, List[ObjectInfo]] = {}
    for obj in objects:
        owner = base_of(obj.key)
        if owner is None:
            bases[obj.key] = obj
        else:
            parts.setdefault(owner, []).append(obj)
    out = {key: join(base, parts.get(key, ())) for key, base in bases.items()}
    for owner, orphans in parts.items():
        if owner not in bases:  # parts whose base is gone: nothing a reader should see
            out.setdefault(owner, join(None, orphans))
    return out
