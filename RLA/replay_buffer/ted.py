"""TED/flat snapshots: drop ``next.obs`` rows that equal the successor's ``obs``, after
checking it on the data.

A row ``s`` is dropped only if its episode's next step ``s'`` is stored and
``next_field[s] == field[s']`` bit for bit; every other row (episode ends, ring wrap, the
writer cursor, or data that breaks the TED contract) is kept verbatim as an exception, so
the round trip is exact whatever the data.
"""

from __future__ import annotations

import ctypes
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.libc import libc_function
from RLA.replay_buffer.schema import Schema

BLOCK = 4096


def check_dedup(schema: Schema, dedup: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Validate ``{next_field: field}`` pairs (same dtype and shape, both declared)."""
    out: Dict[str, str] = {}
    for nxt, cur in (dedup or {}).items():
        a, b = schema.fields.get(nxt), schema.fields.get(cur)
        if a is None or b is None or a.dtype != b.dtype or a.shape != b.shape or nxt == cur:
            raise ReplayBufferError(
                "Bad dedup pair",
                expected="two distinct declared fields with equal dtype and shape, e.g. {'next.obs': 'obs'}",
                found=f"{nxt!r}: {cur!r}",
                fix="name fields of the buffer schema",
            )
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


#: Rows per run compared or copied at once (a run is a stretch of slots whose successors
#: sit a constant distance ahead, as an env's steps do); bounds the extra memory.
BLOCK_BYTES = 8 << 20
#: Shorter runs are gathered together instead of sliced one by one.
MIN_RUN = 16


def runs(succ: np.ndarray, size: int) -> Tuple[List[Tuple[int, int, int]], np.ndarray]:
    """Split the slots with a successor into long runs ``(start, end, distance)`` with
    ``succ[s] == s + distance`` throughout, plus the remaining slots (short runs)."""
    succ = succ[:size]
    if size == 0:
        return [], np.zeros(0, dtype=np.int64)
    delta = np.where(succ >= 0, succ - np.arange(size), 0)  # 0: no successor
    bounds = np.flatnonzero(np.diff(delta)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [size]])
    d = delta[starts]
    long_ = (d != 0) & (ends - starts >= MIN_RUN)
    out = [(int(s), int(e), int(k)) for s, e, k in zip(starts[long_], ends[long_], d[long_])]
    short = (d != 0) & ~long_
    rest = [np.arange(s, e) for s, e in zip(starts[short], ends[short])]
    return out, (np.concatenate(rest).astype(np.int64) if rest else np.zeros(0, dtype=np.int64))


def _rows_per_block(arr: np.ndarray) -> int:
    row = max(1, arr[:1].nbytes)
    return max(1, BLOCK_BYTES // row)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    """Byte equality of two equally shaped blocks (one memcmp when both are contiguous)."""
    memcmp = libc_function("memcmp", (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t))
    if memcmp is not None and x.flags.c_contiguous and y.flags.c_contiguous:
        return memcmp(x.ctypes.data, y.ctypes.data, x.nbytes) == 0
    return bool(
        np.array_equal(
            x.view(np.uint8) if x.flags.c_contiguous else x, y.view(np.uint8) if y.flags.c_contiguous else y
        )
    )


def _differing_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row numbers where two blocks differ, bit for bit."""
    m = len(x)
    x8 = np.ascontiguousarray(x).reshape(m, -1).view(np.uint8)
    y8 = np.ascontiguousarray(y).reshape(m, -1).view(np.uint8)
    return np.flatnonzero(~(x8 == y8).all(axis=1))


def exceptions(
    arrays: Mapping[str, np.ndarray], dedup: Mapping[str, str], size: int, succ: np.ndarray
) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """Rows that cannot be rebuilt from the successor: ``{field: (slots, values)}``."""
    out = {}
    long_runs, rest = runs(succ, size)
    for nxt, cur in dedup.items():
        a, b = arrays[nxt], arrays[cur]
        bad = [np.flatnonzero(succ[:size] < 0)]
        step = _rows_per_block(a)
        for s, e, k in long_runs:  # successors a constant distance ahead: compare in place
            for lo in range(s, e, step):
                hi = min(lo + step, e)
                if not _same(a[lo:hi], b[lo + k : hi + k]):
                    bad.append(lo + _differing_rows(a[lo:hi], b[lo + k : hi + k]))
        for lo in range(0, rest.size, BLOCK):  # blocks bound the extra memory
            rows = rest[lo : lo + BLOCK]
            x = a[rows].reshape(rows.size, -1).view(np.uint8)
            y = b[succ[rows]].reshape(rows.size, -1).view(np.uint8)
            bad.append(rows[~(x == y).all(axis=1)])
        slots = np.sort(np.concatenate(bad)).astype(np.int64)
        out[nxt] = (slots, np.array(a[slots], copy=True))
    return out


def restore(
    arrays: Mapping[str, np.ndarray],
    dedup: Mapping[str, str],
    size: int,
    succ: np.ndarray,
    exc: Mapping[str, Tuple[np.ndarray, np.ndarray]],
) -> None:
    """Rebuild the dropped fields in place from successors plus the exceptions."""
    long_runs, rest = runs(succ, size)
    for nxt, cur in dedup.items():
        a, b = arrays[nxt], arrays[cur]
        for s, e, k in long_runs:  # one slice copy per run
            a[s:e] = b[s + k : e + k]
        for lo in range(0, rest.size, BLOCK):
            rows = rest[lo : lo + BLOCK]
            a[rows] = b[succ[rows]]
        slots, values = exc[nxt]
        a[slots] = values
