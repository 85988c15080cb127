"""``ReplayBuffer``: a transition ring buffer with a schema, per-env episodes and samplers."""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.episodes import EpisodeTracker
from RLA.replay_buffer.samplers.base import Sampler, make_sampler
from RLA.replay_buffer.schema import FLAG_LAST, Schema, to_numpy, to_torch, unflatten
from RLA.replay_buffer.storage.base import Storage, make_storage

if TYPE_CHECKING:
    from RLA.replay_buffer.snapshot.async_save import SaveHandle

#: Fields whose truth ends the episode of their env (any that the schema declares).
DEFAULT_DONE_KEYS = ("done", "terminated", "truncated", "next.done", "next.terminated", "next.truncated")


class ReplayBuffer:
    """A fixed-capacity FIFO ring of transitions with exact, atomic, incremental snapshots.

    Args:
        capacity: number of slots.
        schema: nested ``{name: (shape, dtype)}`` mapping or a :class:`Schema`; inferred from
            the first ``add`` when omitted.
        sampler: ``"uniform"``, ``"prioritized"``, ``"without_replacement"``, ``"sequence"``
            or another registered name.
        sampler_options: keyword options of the sampler (``alpha``, ``beta``, ``seq_len``...).
        storage: ``"ram"`` or ``"memmap"``; ``storage_options`` go to its constructor
            (``directory=`` for memmap).
        num_envs: number of envs whose steps are added (``env_ids`` in ``0..num_envs-1``).
        seed: seed of the buffer-owned generator (its state is part of every snapshot).
        done_keys: fields that end an episode when true (default: the usual done names).
        rank: this process's rank (mints globally unique episode ids, default snapshot shard).
        world_size: number of ranks saving shards of one snapshot.
        segment_bytes: target size of one immutable snapshot segment.
        return_torch: return torch tensors from ``sample``/``get``; ``None`` = when torch
            tensors were added.
    """

    def __init__(
        self,
        capacity: int,
        schema: Optional[Mapping[str, Any] | Schema] = None,
        sampler: str = "uniform",
        sampler_options: Optional[Dict[str, Any]] = None,
        storage: str = "ram",
        storage_options: Optional[Dict[str, Any]] = None,
        num_envs: int = 1,
        seed: Optional[int] = 0,
        done_keys: Optional[Sequence[str]] = None,
        rank: int = 0,
        world_size: int = 1,
        segment_bytes: int = 4 << 20,
        return_torch: Optional[bool] = None,
    ) -> None:
        if int(capacity) < 1:
            raise ReplayBufferError(
                "capacity must be positive",
                expected=">= 1",
                found=str(capacity),
                fix="pass capacity=1 or more",
            )
        self._capacity = int(capacity)
        self.sampler_kind = sampler
        self.sampler_options = dict(sampler_options or {})
        self.sampler: Sampler = make_sampler(sampler, self._capacity, **self.sampler_options)
        self.storage_kind = storage
        self.storage: Storage = make_storage(storage, **(storage_options or {}))
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.rank, self.world_size = int(rank), int(world_size)
        self.episodes = EpisodeTracker(num_envs, origin=self.rank)
        self.done_keys = tuple(done_keys) if done_keys is not None else None
        self.segment_bytes = int(segment_bytes)
        self.return_torch = return_torch
        self.schema: Optional[Schema] = None
        self.lock = threading.RLock()
        self._size = 0
        self._cursor = 0
        self.write_count = 0
        self.generation = 0
        self.chunk_slots = 1
        self.chunk_ver = np.zeros(0, dtype=np.int64)
        self.session = uuid.uuid4().hex[:10]
        #: (store realpath, rank) -> {chunk: segment record}; what is already on disk.
        self.persisted: Dict[Tuple[str, int], Dict[int, Dict[str, Any]]] = {}
        #: Set by an in-flight async save: guards chunks it still has to write.
        #: Called (under the lock) with the chunks an ``add`` is about to overwrite, while a
        #: background save still has to write them (async_save's copy-on-write).
        self.cow_hook: Optional[Callable[[np.ndarray], None]] = None
        self._pending: Optional[SaveHandle] = None
        self.closed = False
        if schema is not None:
            self._allocate(schema if isinstance(schema, Schema) else Schema.from_spec(schema))

    # ----------------------------------------------------------------- properties
    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def cursor(self) -> int:
        """Slot the next item is written to."""
        return self._cursor

    def __len__(self) -> int:
        return self._size

    @property
    def num_envs(self) -> int:
        return self.episodes.num_envs

    def __repr__(self) -> str:
        return (
            f"ReplayBuffer(len={self._size}, capacity={self._capacity}, "
            f"cursor={self._cursor}, sampler={self.sampler_kind!r}, "
            f"storage={self.storage_kind!r})"
        )

    def _allocate(self, schema: Schema) -> None:
        self.schema = schema
        self.storage.allocate(schema, self._capacity)
        self.chunk_slots = max(1, self.segment_bytes // max(1, schema.item_bytes))
        n_chunks = -(-self._capacity // self.chunk_slots)
        self.chunk_ver = np.zeros(n_chunks, dtype=np.int64)

    def _done_mask(self, arrays: Dict[str, np.ndarray], n: int) -> np.ndarray:
        keys = self.done_keys if self.done_keys is not None else DEFAULT_DONE_KEYS
        done = np.zeros(n, dtype=bool)
        for key in keys:
            if key in arrays:
                done |= arrays[key].reshape(n, -1).astype(bool).any(axis=1)
            elif self.done_keys is not None:
                raise ReplayBufferError(
                    f"done key {key!r} is not a field",
                    expected=f"one of {sorted(arrays)}",
                    found=repr(key),
                    fix="fix done_keys",
                )
        return done

    def _env_ids(self, env_ids: Any, n: int) -> np.ndarray:
        if env_ids is None:
            if self.num_envs == 1:
                return np.zeros(n, dtype=np.int64)
            if n == self.num_envs:
                return np.arange(n, dtype=np.int64)
            raise ReplayBufferError(
                "env_ids are required when num_envs > 1",
                expected=f"{n} env ids",
                found="env_ids=None",
                fix="pass env_ids with one id per item",
            )
        ids = to_numpy(env_ids).astype(np.int64).reshape(-1)
        if ids.size == 1 and n != 1:
            ids = np.full(n, ids[0], dtype=np.int64)
        if ids.size != n:
            raise ReplayBufferError(
                "env_ids do not match the batch",
                expected=f"{n} ids",
                found=f"{ids.size} ids",
                fix="pass one env id per item",
            )
        return ids

    # ----------------------------------------------------------------- writing
    def add(self, batch: Mapping[str, Any], env_ids: Any = None) -> np.ndarray:
        """Append a batch (nested dict of arrays/tensors with leading dim B); return its slots.

        Items of one env must be given in time order; an item whose done key is true ends
        its env's episode.
        """
        self._check_open()
        with self.lock:
            if self.schema is None:
                self._allocate(Schema.infer(batch))
            assert self.schema is not None  # set by _allocate
            arrays, n, had_torch = self.schema.convert(batch)
            if self.return_torch is None and had_torch:
                self.return_torch = True
            ids = self._env_ids(env_ids, n)
            done = self._done_mask(arrays, n)
            ep, step = self.episodes.assign(ids, done)
            if n == 0:
                return np.zeros(0, dtype=np.int64)
            keep = slice(max(0, n - self._capacity), n)  # only the newest `capacity` survive
            values = {name: arr[keep] for name, arr in arrays.items()}
            values["_env_id"] = ids[keep]
            values["_episode_id"] = ep[keep]
            values["_step"] = step[keep]
            values["_flags"] = np.where(done[keep], FLAG_LAST, 0).astype(np.uint8)
            m = len(ids[keep])
            self.write_count += n - m
            slots = (self._cursor + np.arange(m)) % self._capacity
            chunks = np.unique(slots // self.chunk_slots)
            if self.cow_hook is not None:
                self.cow_hook(chunks)
            first = min(m, self._capacity - self._cursor)
            for name, value in values.items():
                dest = self.storage.arrays[name]
                dest[self._cursor : self._cursor + first] = value[:first]
                if first < m:
                    dest[: m - first] = value[first:]
            self.chunk_ver[chunks] += 1
            self._cursor = (self._cursor + m) % self._capacity
            self._size = min(self._capacity, self._size + m)
            self.write_count += m
            self.sampler.on_add(slots)
            return slots

    def extend(self, batch: Mapping[str, Any], env_ids: Any = None) -> np.ndarray:
        """Alias of :meth:`add` (TorchRL's name)."""
        return self.add(batch, env_ids)

    def clear(self) -> None:
        """Forget every item and the episode state (the RNG stream continues)."""
        with self.lock:
            self._size = self._cursor = 0
            self.write_count = 0
            self.episodes.reset()
            self.sampler.reset()
            self.chunk_ver += 1
            self.generation += 1
            self.persisted.clear()

    # ----------------------------------------------------------------- reading
    def _check_indices(self, indices: Any) -> np.ndarray:
        idx = to_numpy(indices).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self._size):
            raise ReplayBufferError(
                "Index out of range",
                expected=f"0 <= index < {self._size}",
                found=f"[{idx.min()}, {idx.max()}]",
                fix="use indices returned by sample() or below len(buffer)",
            )
        return idx

    def _out(self, value: np.ndarray) -> Any:
        return to_torch(value) if self.return_torch else value

    def _gather(self, idx: np.ndarray, meta: bool) -> Dict[str, Any]:
        assert self.schema is not None
        flat = {name: self._out(self.storage.arrays[name][idx]) for name in self.schema.fields}
        out = unflatten(flat)
        if meta:
            out["env_id"] = self._out(self.storage.arrays["_env_id"][idx])
            out["episode_id"] = self._out(self.storage.arrays["_episode_id"][idx])
            out["step"] = self._out(self.storage.arrays["_step"][idx])
        return out

    def sample(self, batch_size: int) -> Tuple[Dict[str, Any], Any, Any]:
        """Draw a batch: ``(batch dict, indices, importance weights)``."""
        self._check_open()
        with self.lock:
            idx, weights = self.sampler.sample(self, int(batch_size), self.rng)
            return self._gather(idx, meta=False), self._out(idx), self._out(weights)

    def get(self, indices: Any) -> Dict[str, Any]:
        """Items at ``indices``: every field plus ``env_id``, ``episode_id`` and ``step``."""
        with self.lock:
            return self._gather(self._check_indices(indices), meta=True)

    def priority(self, indices: Any) -> Any:
        """Priorities of ``indices`` (1.0 for samplers without priorities)."""
        with self.lock:
            return self._out(self.sampler.priority(self._check_indices(indices)))

    def update_priority(self, indices: Any, priorities: Any) -> None:
        """Set the priorities of ``indices`` (prioritized sampler)."""
        with self.lock:
            idx = self._check_indices(indices)
            self.sampler.update_priority(idx, to_numpy(priorities))

    # ----------------------------------------------------------------- snapshots
    def dumps(
        self,
        path: Any,
        incremental: bool = True,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        **options: Any,
    ) -> Any:
        """Write an atomic snapshot into the store ``path``; returns the snapshot directory.

        See :class:`RLA.replay_buffer.snapshot.save.SaveOptions` for the options
        (``snapshot_id``, ``keep_last``, ``durable``, ``group``, ``barrier_timeout``...).
        """
        from RLA.replay_buffer.snapshot.save import SaveOptions, save_buffer

        self._check_open()
        self._raise_pending()
        chosen = SaveOptions(incremental=incremental, rank=rank, world_size=world_size, **options)
        return save_buffer(self, path, chosen)

    def dumps_async(self, path: Any, incremental: bool = True, **options: Any) -> Any:
        """Start a point-in-time snapshot in a background thread; returns a handle with
        ``wait()`` (which re-raises any error). One save runs at a time."""
        from RLA.replay_buffer.snapshot.async_save import start_async_save
        from RLA.replay_buffer.snapshot.save import SaveOptions

        self._check_open()
        self._raise_pending()
        handle = start_async_save(self, path, SaveOptions(incremental=incremental, **options))
        self._pending = handle
        return handle

    def loads(self, path: Any, **options: Any) -> Dict[str, Any]:
        """Restore a snapshot (newest in the store, or ``snapshot=<id>``); returns a report.

        With the snapshot's world size (and no policy) the restore is exact; otherwise the
        shards are redistributed to ``world_size`` ranks (see ``RLA.replay_buffer.sharding``).
        ``direct_reads=False`` reads every file through the page cache (default: cold files
        with O_DIRECT where the system has it, unless ``RLA_REPLAY_DIRECT_IO=0``).
        On any error the buffer is left unchanged.
        """
        from RLA.replay_buffer.snapshot.load import load_buffer

        self._check_open()
        self._raise_pending()
        return load_buffer(self, path, **options)

    def _raise_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:  # an error already raised by its wait() is not raised twice
            pending.drain()

    # ----------------------------------------------------------------- lifecycle
    def _check_open(self) -> None:
        if self.closed:
            raise ReplayBufferError(
                "The replay buffer is closed",
                expected="an open buffer",
                found="close() was called",
                fix="build a new buffer",
            )

    def close(self) -> None:
        """Wait for a pending async save (re-raising its error), then release the storage."""
        if self.closed:
            return
        try:
            self._raise_pending()
        finally:
            self.closed = True
            self.storage.close()

    def __enter__(self) -> "ReplayBuffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
