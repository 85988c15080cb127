"""Sequence (slice) sampling: windows of consecutive steps inside one episode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.samplers.base import Sampler

if TYPE_CHECKING:
    from RLA.replay_buffer.buffer import ReplayBuffer


class SequenceSampler(Sampler):
    """Draws ``seq_len`` consecutive steps of one episode, uniformly over valid starts.

    ``sample`` returns indices of shape ``(batch, seq_len)``. The table of valid starts is
    derived from the episode ids and steps and rebuilt whenever the buffer changed.

    Args:
        capacity: number of slots.
        seq_len: steps per sequence.
    """

    kind = "sequence"

    def __init__(self, capacity: int, seq_len: int = 8) -> None:
        super().__init__(capacity)
        if int(seq_len) < 1:
            raise ReplayBufferError(
                "seq_len must be positive", expected=">= 1", found=str(seq_len), fix="pass seq_len=1 or more"
            )
        self.seq_len = int(seq_len)
        self._cache_key: Optional[Tuple[int, int, int]] = None
        self._order = np.zeros(0, dtype=np.int64)
        self._starts = np.zeros(0, dtype=np.int64)

    def params(self) -> Dict[str, Any]:
        return {"seq_len": self.seq_len}

    def _refresh(self, buffer: "ReplayBuffer") -> None:
        key = (buffer.write_count, len(buffer), buffer.generation)
        if key == self._cache_key:
            return
        n = len(buffer)
        ep = buffer.storage.arrays["_episode_id"][:n]
        step = buffer.storage.arrays["_step"][:n]
        order = np.lexsort((step, ep)).astype(np.int64)
        L = self.seq_len
        if n >= L:
            ep_o, st_o = ep[order], step[order]
            ok = (ep_o[L - 1 :] == ep_o[: n - L + 1]) & (st_o[L - 1 :] - st_o[: n - L + 1] == L - 1)
            starts = np.flatnonzero(ok)
        else:
            starts = np.zeros(0, dtype=np.int64)
        self._order, self._starts, self._cache_key = order, starts, key

    def sample(
        self, buffer: "ReplayBuffer", batch_size: int, rng: np.random.Generator
    ) -> Tuple[np.ndarray, np.ndarray]:
        self._refresh(buffer)
        if self._starts.size == 0:
            raise ReplayBufferError(
                "No episode holds enough consecutive steps for sequence sampling",
                expected=f"an episode with >= {self.seq_len} stored steps",
                found=f"{len(buffer)} items",
                fix="add more data or use a smaller seq_len",
            )
        pick = self._starts[rng.integers(0, self._starts.size, size=batch_size)]
        pos = pick[:, None] + np.arange(self.seq_len)[None, :]
        return self._order[pos], np.ones(batch_size, dtype=np.float64)

    def invalidate(self) -> None:
        self._cache_key = None

    def reset(self) -> None:
        self.invalidate()
