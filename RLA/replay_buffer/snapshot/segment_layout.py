"""Where each field's chunk lies in a segment file (format 2 layout, format 1 still read).

A segment holds the items ``[start, end)`` of every stored field, field after field. In
format 2 a chunk of at least ``fmt.ALIGN_MIN_BYTES`` is preceded by zero padding (less than
``fmt.ALIGN_TO`` bytes, covered by the file's checksum) so that its file offset is congruent
to its byte offset in the field's array: a cold load can then read it in place with O_DIRECT
(direct_read.py). A padded segment lists its chunks' ``offsets`` in the shard manifest; a
format 1 segment, or one that needed no padding, lists none (its chunks are back to back).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Tuple

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer.schema import FieldSpec
from RLA.replay_buffer.snapshot import format as fmt

ZEROS = memoryview(bytes(fmt.ALIGN_TO))


def field_offsets(item_bytes: List[int], start: int, n: int) -> Tuple[List[int], int]:
    """Where each field's chunk starts in the segment of items ``[start, start + n)``.

    Format 2 layout: chunks follow each other in field order; one of at least
    ``fmt.ALIGN_MIN_BYTES`` is preceded by zero padding (< ``fmt.ALIGN_TO`` bytes) so that its
    file offset is congruent to its byte offset in the field's array (``start * item``). In a
    page-aligned array the chunk can then be read in place with O_DIRECT. Returns the offsets
    and the file size.
    """
    offsets, pos = [], 0
    for item in item_bytes:
        if n * item >= fmt.ALIGN_MIN_BYTES:
            pos += (start * item - pos) % fmt.ALIGN_TO
        offsets.append(pos)
        pos += n * item
    return offsets, pos


def padded(views: List[memoryview], offsets: List[int]) -> List[memoryview]:
    """``views`` with the zero padding that puts each at its offset."""
    out, pos = [], 0
    for view, off in zip(views, offsets):
        if off > pos:
            out.append(ZEROS[:off - pos])
        out.append(view)
        pos = off + len(view)
    return out


def segment_spans(seg: Dict[str, Any], fields: List[FieldSpec], path: Path) -> List[int]:
    """The file offset of each field's chunk in ``seg``, checked against its size.

    Format 1 segments list no offsets: their chunks are back to back.
    """
    n = seg["end"] - seg["start"]
    sizes = [n * f.item_bytes for f in fields]
    offsets = seg.get("offsets")
    if offsets is None:
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    ok = isinstance(offsets, list) and len(offsets) == len(sizes) and \
        all(isinstance(o, int) for o in offsets)
    pos = 0
    for off, size in zip(offsets if ok else [], sizes):
        ok = ok and pos <= off < pos + fmt.ALIGN_TO
        pos = off + size
    if not ok or pos != seg["bytes"]:
        raise CorruptSnapshotError(f"Segment {path} does not match the schema",
                                   expected=f"{sum(sizes)} bytes of {n} items "
                                            f"({len(sizes)} fields, padding < {fmt.ALIGN_TO})",
                                   found=f"{seg['bytes']} bytes listed, offsets {offsets!r:.80}",
                                   fix="load an older snapshot")
    return offsets
