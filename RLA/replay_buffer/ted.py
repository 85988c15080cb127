"""TED/flat snapshots: drop ``next.obs`` rows that equal the successor's ``obs``, after
checking it on the data.

A row ``s`` is dropped only if its episode's next step ``s'`` is stored and
``next_field[s] == field[s']`` bit for bit; every other row (episode ends, ring wrap, the
writer cursor, or data that breaks the TED contract) is kept verbatim as an exception, so
the round trip is exact whatever the data.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.schema import Schema

BLOCK = 4096


def check_dedup(schema: Schema, dedup: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Validate ``{next_field: field}`` pairs (same dtype and shape, both declared)."""
    out: Dict[str, str] = {}
    for nxt, cur in (dedup or {}).items():
        a, b = schema.fields.get(nxt), schema.fields.get(cur)
        if a is None or b is None or a.dtype != b.dtype or a.shape != b.shape or nxt == cur:
            raise ReplayBufferError(
                "Bad dedup pair", expected="two distinct declared fields with equal dtype and "
                "shape, e.g. {'next.obs': 'obs'}", found=f"{nxt!r}: {cur!r}",
                fix="name fields of the buffer schema")
        out[nxt] = cur
    return out


def successors(ep: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Slot of the same episode's next step, or -1."""
    n = len(ep)
    succ = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return succ
    order = np.lexsort((step, ep))
    ok = (ep[order[1:]] == ep[order[:-1]]) & (step[order[1:]] == step[order[:-1]] + 1)
    succ[order[:-1][ok]] = order[1:][ok]
    return succ


def exceptions(arrays: Mapping[str, np.ndarray], dedup: Mapping[str, str], size: int,
               succ: np.ndarray) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """Rows that cannot be rebuilt from the successor: ``{field: (slots, values)}``."""
    out = {}
    for nxt, cur in dedup.items():
        a, b = arrays[nxt], arrays[cur]
        bad = [np.flatnonzero(succ[:size] < 0)]
        has = np.flatnonzero(succ[:size] >= 0)
        for lo in range(0, has.size, BLOCK):  # blocks bound the extra memory
            rows = has[lo:lo + BLOCK]
            x = a[rows].reshape(rows.size, -1).view(np.uint8)
            y = b[succ[rows]].reshape(rows.size, -1).view(np.uint8)
            bad.append(rows[~(x == y).all(axis=1)])
        slots = np.sort(np.concatenate(bad)).astype(np.int64)
        out[nxt] = (slots, np.array(a[slots], copy=True))
    return out


def restore(arrays: Mapping[str, np.ndarray], dedup: Mapping[str, str], size: int,
            succ: np.ndarray, exc: Mapping[str, Tuple[np.ndarray, np.ndarray]]) -> None:
    """Rebuild the dropped fields in place from successors plus the exceptions."""
    has = np.flatnonzero(succ[:size] >= 0)
    for nxt, cur in dedup.items():
        a, b = arrays[nxt], arrays[cur]
        for lo in range(0, has.size, BLOCK):
            rows = has[lo:lo + BLOCK]
            a[rows] = b[succ[rows]]
        slots, values = exc[nxt]
        a[slots] = values
