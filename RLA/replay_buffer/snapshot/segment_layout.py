"""How each field's chunk is stored in a segment file (formats 2 and 3; format 1 still read).

A segment holds the items ``[start, end)`` of every stored field, field after field.

- Since format 2 a chunk of at least ``fmt.ALIGN_MIN_BYTES`` is preceded by zero padding
  (less than ``fmt.ALIGN_TO`` bytes, covered by the file's checksum) so that its file offset
  is congruent to its byte offset in the field's array: a cold load can then read it in place
  with O_DIRECT (direct_read.py). A padded segment lists its chunks' ``offsets`` in the shard
  manifest; a format 1 segment, or one that needed no padding, lists none (chunks are back to
  back).
- Since format 3 an integer chunk whose values span a narrow range is stored as unsigned
  offsets from its minimum in the narrowest type that holds them (frame of reference). The
  segment lists such chunks in ``narrow``: ``{field: [stored dtype, base]}``. The episode
  bookkeeping every item carries (env id, episode id, step: 20 bytes) mostly shrinks to 4, and
  so do integer fields such as discrete actions stored as int64. A load widens them back
  exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer.schema import FieldSpec
from RLA.replay_buffer.snapshot import format as fmt

ZEROS = memoryview(bytes(fmt.ALIGN_TO))
#: Stored types of narrowed integer chunks, narrowest first.
NARROW = (np.dtype("<u1"), np.dtype("<u2"), np.dtype("<u4"))


def narrowed(arr: np.ndarray) -> Tuple[np.ndarray, Optional[List[Any]]]:
    """``arr`` as it is stored: for an integer chunk whose values span less than a narrower
    unsigned type, ``(arr - min)`` in that type and ``[its dtype, min]``; otherwise
    ``(arr, None)``."""
    dtype = arr.dtype
    if dtype.kind not in "iu" or dtype.itemsize == 1 or not dtype.isnative or not arr.size:
        return arr, None
    lo, hi = int(arr.min()), int(arr.max())
    for stored in NARROW:
        if stored.itemsize < dtype.itemsize and hi - lo <= np.iinfo(stored).max:
            # hi - lo fits the field's own type too, so the subtraction cannot wrap
            return np.subtract(arr, dtype.type(lo), dtype=dtype).astype(stored), [stored.str, lo]
    return arr, None


def check_widens(stored: np.ndarray, base: int, dtype: np.dtype, path: Path) -> None:
    """Raise unless every ``stored + base`` fits ``dtype`` (a chunk and a base that do not
    belong together, e.g. in an edited manifest, would otherwise wrap around silently)."""
    if stored.size and base + int(stored.max()) > int(np.iinfo(dtype).max):
        raise CorruptSnapshotError(
            f"Segment {path} lists a bad integer encoding",
            expected=f"base + stored values within {dtype}",
            found=f"base {base} + {int(stored.max())}",
            fix="load an older snapshot",
        )


def widen(stored: np.ndarray, base: int, out: np.ndarray, path: Path) -> None:
    """Write ``stored + base`` into ``out`` (the inverse of :func:`narrowed`, exact).

    The sum is computed in ``out``'s type, whatever the numpy version's promotion rules (numpy
    1 would add a small base in the stored type and wrap around).
    """
    check_widens(stored, base, out.dtype, path)
    np.add(stored, np.array(base, dtype=out.dtype), out=out, dtype=out.dtype, casting="unsafe")


def stored_dtypes(
    seg: Dict[str, Any], fields: Sequence[FieldSpec], path: Path
) -> List[Tuple[np.dtype, Optional[int]]]:
    """Each field's stored dtype in ``seg`` and its base (None: stored as is), checked."""
    narrow = seg.get("narrow") or {}
    names = {f.name for f in fields}
    out: List[Tuple[np.dtype, Optional[int]]] = []
    ok = isinstance(narrow, dict) and set(narrow) <= names
    for f in fields:
        enc = narrow.get(f.name) if ok else None
        if enc is None:
            out.append((f.dtype, None))
            continue
        valid = (
            isinstance(enc, list)
            and len(enc) == 2
            and enc[0] in [d.str for d in NARROW]
            and isinstance(enc[1], int)
            and not isinstance(enc[1], bool)
            and f.dtype.kind in "iu"
            and np.dtype(enc[0]).itemsize < f.dtype.itemsize
        )
        if valid:
            info = np.iinfo(f.dtype)
            valid = info.min <= enc[1] <= info.max
        if not valid:
            ok = False
            break
        out.append((np.dtype(enc[0]), enc[1]))
    if not ok:
        raise CorruptSnapshotError(
            f"Segment {path} lists a bad integer encoding",
            expected="narrow: {integer field: [u1|u2|u4 dtype, base]}",
            found=f"{narrow!r:.120}",
            fix="load an older snapshot",
        )
    return out


def field_offsets(
    item_bytes: List[int], start: int, n: int, in_place: Optional[List[bool]] = None
) -> Tuple[List[int], int]:
    """Where each field's chunk starts in the segment of items ``[start, start + n)``.

    Chunks follow each other in field order; one of at least ``fmt.ALIGN_MIN_BYTES`` (and
    ``in_place``: stored as is, not narrowed) is preceded by zero padding (< ``fmt.ALIGN_TO``
    bytes) so that its file offset is congruent to its byte offset in the field's array
    (``start * item``). In a page-aligned array the chunk can then be read in place with
    O_DIRECT. Returns the offsets and the file size.
    """
    offsets, pos = [], 0
    for i, item in enumerate(item_bytes):
        if n * item >= fmt.ALIGN_MIN_BYTES and (in_place is None or in_place[i]):
            pos += (start * item - pos) % fmt.ALIGN_TO
        offsets.append(pos)
        pos += n * item
    return offsets, pos


def padded(views: List[memoryview], offsets: List[int]) -> List[memoryview]:
    """``views`` with the zero padding that puts each at its offset."""
    out, pos = [], 0
    for view, off in zip(views, offsets):
        if off > pos:
            out.append(ZEROS[: off - pos])
        out.append(view)
        pos = off + len(view)
    return out


def segment_spans(
    seg: Dict[str, Any],
    fields: List[FieldSpec],
    path: Path,
    stored: Optional[List[Tuple[np.dtype, Optional[int]]]] = None,
) -> List[int]:
    """The file offset of each field's chunk in ``seg``, checked against its size.

    ``stored``: the fields' stored dtypes (:func:`stored_dtypes`; default: as declared).
    Format 1 segments list no offsets: their chunks are back to back.
    """
    n = seg["end"] - seg["start"]
    stored = stored or [(f.dtype, None) for f in fields]
    sizes = [n * int(np.prod(f.shape, dtype=np.int64)) * dt.itemsize for f, (dt, _) in zip(fields, stored)]
    offsets = seg.get("offsets")
    if offsets is None:
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    ok = isinstance(offsets, list) and len(offsets) == len(sizes) and all(isinstance(o, int) for o in offsets)
    pos = 0
    for off, size in zip(offsets if ok else [], sizes):
        ok = ok and pos <= off < pos + fmt.ALIGN_TO
        pos = off + size
    if not ok:
        raise CorruptSnapshotError(
            f"Segment {path} lists bad chunk offsets",
            expected=f"{len(sizes)} increasing offsets, each chunk after "
            f"the previous one with padding < {fmt.ALIGN_TO}",
            found=f"offsets {offsets!r:.80} for chunks of {sizes!r:.80} bytes",
            fix="load an older snapshot",
        )
    if pos != seg["bytes"]:
        raise CorruptSnapshotError(
            f"Segment {path} does not match the schema",
            expected=f"{pos} bytes for {n} items of {len(sizes)} fields (as the schema and offsets say)",
            found=f"{seg['bytes']} bytes listed",
            fix="load an older snapshot",
        )
    return offsets


def chunk_layout(
    seg: Dict[str, Any], fields: List[FieldSpec], path: Path
) -> List[Tuple[int, np.dtype, Optional[int]]]:
    """Each field's chunk in ``seg``: ``(file offset, stored dtype, base or None)``, checked
    against the segment's size (:func:`stored_dtypes`, :func:`segment_spans`)."""
    stored = stored_dtypes(seg, fields, path)
    offsets = segment_spans(seg, fields, path, stored)
    return [(off, dtype, base) for off, (dtype, base) in zip(offsets, stored)]
