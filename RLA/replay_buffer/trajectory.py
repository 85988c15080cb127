"""``TrajectoryReplayBuffer``: whole trajectories with ids, a sample window, a cache and
background auto-save (the RLinf seed API), stored in the RLA snapshot format.

Fixed relative to the seed: the saved index and the saved files always agree (a checkpoint
waits for pending writes and stores every indexed trajectory), the RNG stream continues
after a load, ids stay globally unique across ranks, pickle needs an explicit opt-in, and no
derived window survives ``clear``/``load``.
"""

from __future__ import annotations

import dataclasses
import queue
import shutil
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.fs import atomic_write_json
from RLA.replay_buffer import trajectory_checkpoint as tc
from RLA.replay_buffer import trajectory_files as tf
from RLA.replay_buffer.episodes import make_episode_id
from RLA.replay_buffer.schema import (
    check_field_names,
    flatten,
    is_torch,
    to_numpy,
    to_torch,
    unflatten,
)
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import staging as staging_mod
from RLA.replay_buffer.snapshot.commit import Committer
from RLA.replay_buffer.snapshot.save import as_disk_full, exists_error, next_seq, publish
from RLA.replay_buffer.snapshot.shard_io import store_key
from RLA.replay_buffer.trajectory_checkpoint import KIND


def _as_mapping(traj: Any) -> Dict[str, Any]:
    if isinstance(traj, Mapping):
        return dict(traj)
    if dataclasses.is_dataclass(traj):
        return {f.name: getattr(traj, f.name) for f in dataclasses.fields(traj)}
    if hasattr(traj, "__dict__"):
        return {k: v for k, v in vars(traj).items() if not k.startswith("_")}
    raise ReplayBufferError(
        "Bad trajectory",
        expected="a mapping or dataclass of arrays",
        found=type(traj).__name__,
        fix="pass dicts of (T, ...) arrays",
    )


class TrajectoryReplayBuffer:
    """Stores trajectories (dicts of ``(T, ...)`` arrays); samples transitions uniformly from
    the most recent ``sample_window_size`` trajectories.

    Args:
        seed: seed of the buffer-owned generator (saved and restored, never re-seeded).
        enable_cache: keep the newest ``cache_size`` trajectories in memory when auto-saving.
        cache_size: number of cached trajectories.
        sample_window_size: sample from the newest N trajectories (0 = all).
        auto_save: write every trajectory to ``auto_save_path`` in a background thread and
            keep only the cache in memory; without it all trajectories stay in memory.
        auto_save_path: directory of the auto-saved files.
        trajectory_format: ``"npz"`` (default), ``"pt"`` (torch) or ``"pkl"`` (opt-in).
        allow_pickle: allow ``"pkl"``.
        rank, world_size: this process's shard (ids are globally unique across ranks).
    """

    def __init__(
        self,
        seed: int = 1234,
        enable_cache: bool = True,
        cache_size: int = 5,
        sample_window_size: int = 100,
        auto_save: bool = False,
        auto_save_path: Optional[str] = None,
        trajectory_format: str = "npz",
        allow_pickle: bool = False,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.enable_cache = bool(enable_cache)
        self.cache_size = max(0, int(cache_size))
        self.sample_window_size = max(0, int(sample_window_size))
        self.auto_save = bool(auto_save)
        self.trajectory_format = tf.check_format(trajectory_format, allow_pickle)
        if self.auto_save and not auto_save_path:
            raise ReplayBufferError(
                "auto_save needs a directory",
                expected="auto_save_path",
                found="None",
                fix="pass auto_save_path (e.g. the run's replay_dir)",
            )
        self.auto_save_path = Path(auto_save_path) if auto_save_path else None
        if self.auto_save_path is not None:
            self.auto_save_path.mkdir(parents=True, exist_ok=True)
        self.rank, self.world_size = int(rank), int(world_size)
        self.index: List[Dict[str, Any]] = []
        self.next_counter = 0
        self.return_torch = False
        self._memory: Dict[int, Dict[str, np.ndarray]] = {}
        self._cache: "OrderedDict[int, Dict[str, np.ndarray]]" = OrderedDict()
        self._persisted: Dict[Any, Dict[int, Dict[str, Any]]] = {}
        self._lock = threading.RLock()
        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._error: Optional[BaseException] = None
        self._thread: Optional[threading.Thread] = None
        self.closed = False

    # ------------------------------------------------------------- writing
    def add_trajectories(self, trajectories: List[Any]) -> List[int]:
        """Add trajectories; returns their (globally unique) ids."""
        self._check()
        ids = []
        for traj in trajectories:
            raw = _as_mapping(traj)
            meta = {k: v for k, v in raw.items() if isinstance(v, (str, int, float, bool)) or v is None}
            arrays = flatten({k: v for k, v in raw.items() if k not in meta})
            check_field_names(arrays)  # the same names as a ReplayBuffer's fields
            self.return_torch = self.return_torch or any(is_torch(v) for v in arrays.values())
            data = {k: to_numpy(v) for k, v in arrays.items()}
            lengths = {v.shape[0] if v.ndim else -1 for v in data.values()}
            if len(lengths) != 1 or -1 in lengths:
                raise ReplayBufferError(
                    "Trajectory fields have different lengths",
                    expected="arrays sharing the leading time dimension",
                    found=str({k: v.shape for k, v in data.items()}),
                    fix="pad or split the trajectory",
                )
            with self._lock:
                tid = int(make_episode_id(self.rank, self.next_counter))
                self.next_counter += 1
                entry = {
                    "id": tid,
                    "uuid": uuid.uuid4().hex,
                    "length": int(lengths.pop()),
                    "model_weights_id": str(meta.get("model_weights_id", "none")),
                    "meta": meta,
                }
                self.index.append(entry)
                self._keep(entry, data)
            ids.append(tid)
        return ids

    def _keep(self, entry: Dict[str, Any], data: Dict[str, np.ndarray]) -> None:
        """Hold an indexed trajectory: in memory, or cached and queued for its auto-save file."""
        if not self.auto_save:
            self._memory[entry["id"]] = data
            return
        assert self.auto_save_path is not None  # __init__ refuses auto_save without it
        entry["file"] = f"trajectory_{entry['id']}_{entry['model_weights_id']}.{self.trajectory_format}"
        self._remember(entry["id"], data)
        self._ensure_writer()
        self._queue.put((self.auto_save_path / entry["file"], data))

    def _remember(self, tid: int, data: Dict[str, np.ndarray]) -> None:
        if self.enable_cache and self.cache_size:
            self._cache[tid] = data
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _ensure_writer(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._write_loop, daemon=True, name="rla-trajectory-writer"
            )
            self._thread.start()

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                path, data = item
                tf.write(path, data, self.trajectory_format)
            except BaseException as exc:  # noqa: BLE001 - surfaced by the next call
                self._error = self._error or exc
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every auto-save write finished; re-raise a background error."""
        if self._thread is not None:
            self._queue.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    # ------------------------------------------------------------- reading
    def _trajectory(self, entry: Dict[str, Any]) -> Dict[str, np.ndarray]:
        tid = entry["id"]
        if tid in self._memory:
            return self._memory[tid]
        if tid in self._cache:
            self._cache.move_to_end(tid)
            return self._cache[tid]
        self.flush()  # the file may still be queued
        data = tf.read(self.auto_save_path / entry["file"], self.trajectory_format)
        self._remember(tid, data)
        return data

    def window(self) -> List[Dict[str, Any]]:
        """Index entries sampling draws from (computed fresh, never a stale cache)."""
        with self._lock:
            n = self.sample_window_size
            return list(self.index[-n:] if n else self.index)

    def sample(self, num_chunks: int) -> Dict[str, Any]:
        """``num_chunks`` transitions drawn uniformly from the window: arrays ``[num_chunks, ...]``."""
        self._check()
        entries = self.window()
        lengths = np.array([e["length"] for e in entries], dtype=np.int64)
        if not entries or lengths.sum() == 0:
            raise ReplayBufferError(
                "Cannot sample from an empty trajectory buffer",
                expected="at least one non-empty trajectory",
                found=f"{len(entries)} trajectories",
                fix="add_trajectories() first",
            )
        cum = np.cumsum(lengths)
        u = self.rng.integers(0, int(cum[-1]), size=int(num_chunks))
        which = np.searchsorted(cum, u, side="right")
        steps = u - (cum[which] - lengths[which])
        parts: Dict[str, List[Tuple[np.ndarray, np.ndarray]]] = {}
        order = np.argsort(which, kind="stable")
        for pos in np.unique(which):
            data = self._trajectory(entries[pos])
            sel = order[which[order] == pos]
            for name, arr in data.items():
                parts.setdefault(name, []).append((sel, arr[steps[sel]]))
        out = {}
        for name, chunks in parts.items():
            first = chunks[0][1]
            arr = np.empty((int(num_chunks), *first.shape[1:]), dtype=first.dtype)
            for sel, values in chunks:
                arr[sel] = values
            out[name] = to_torch(arr) if self.return_torch else arr
        return unflatten(out)

    def __len__(self) -> int:
        return len(self.index)

    @property
    def total_steps(self) -> int:
        return int(sum(e["length"] for e in self.index))

    # ------------------------------------------------------------- checkpoints
    def save_checkpoint(
        self,
        path: Any,
        keep_last: Optional[int] = None,
        snapshot_id: Optional[str] = None,
        overwrite: bool = False,
    ) -> Path:
        """Write every indexed trajectory and the index as one atomic snapshot in ``path``."""
        from RLA.replay_buffer.snapshot.retention import apply_keep_last, collect_garbage

        self._check()
        self.flush()
        store = Path(path)
        store.mkdir(parents=True, exist_ok=True)
        seq = next_seq(store)
        snap_id = snapshot_id or f"snap-{seq:08d}"
        if (store / snap_id).exists() and not overwrite:
            raise exists_error(store / snap_id)
        staging = Committer().staging(store, snap_id)
        key = store_key(store, self.rank)
        written: List[Path] = []
        try:
            with self._lock:
                entries = [dict(e) for e in self.index]
            known = self._persisted.get(key, {})
            records = tc.write_segments(store, self.rank, entries, known, written, self._trajectory)
            shard = {
                "kind": KIND,
                "rank": self.rank,
                "world_size": 1,
                "trajectories": entries,
                "next_counter": self.next_counter,
                "rng": self.rng.bit_generator.state,
                "seed": self.seed,
                "return_torch": self.return_torch,
                "episode_report": {
                    "complete": {"episodes": len(entries), "steps": sum(e["length"] for e in entries)}
                },
            }
            atomic_write_json(staging / fmt.shard_file(0), shard)
            target = publish(store, staging, snap_id, seq, 1, kind=KIND, overwrite=overwrite)
        except BaseException as exc:
            shutil.rmtree(staging, ignore_errors=True)
            for path in written:  # new files no snapshot references
                path.unlink(missing_ok=True)
            error = as_disk_full(exc, store)
            if error is exc:
                raise
            raise error from exc
        finally:
            staging_mod.release(staging)
        self._persisted[key] = records
        apply_keep_last(store, keep_last, protect=snap_id)
        collect_garbage(store, self.rank, {r["file"] for r in records.values()})
        return target

    def load_checkpoint(
        self, load_path: Any, is_distributed: bool = False, local_rank: int = 0, world_size: int = 1
    ) -> Dict[str, Any]:
        """Load a checkpoint; with ``is_distributed`` take this rank's balanced share.

        All files are verified before the buffer changes. The RNG continues exactly when the
        whole checkpoint is loaded into one buffer; a share of a redistributed checkpoint
        gets a stream derived from (seed, rank).
        """
        self._check()
        self.flush()
        distributed = is_distributed and world_size > 1
        loaded = tc.read_checkpoint(load_path, (local_rank, world_size) if distributed else None)
        shards, entries, data = loaded.shards, loaded.entries, loaded.data
        first = shards[min(shards)]
        exact = len(shards) == 1 and not distributed
        with self._lock:
            self.clear()
            for e in entries:
                e = {k: v for k, v in e.items() if k != "segment"}
                self.index.append(e)
                self._keep(e, data[e["id"]])
            self.next_counter = loaded.next_counter
            if is_distributed:
                self.rank, self.world_size = int(local_rank), int(world_size)
            if exact:
                self.rng.bit_generator.state = first["rng"]
            else:
                base = first.get("seed")
                self.rng = np.random.default_rng(
                    np.random.SeedSequence(int(base) if isinstance(base, int) else 0, spawn_key=(self.rank,))
                )
            self.return_torch = bool(first.get("return_torch"))
        return {
            "snapshot": str(loaded.snap_dir),
            "trajectories": len(entries),
            "steps": int(sum(e["length"] for e in entries)),
            "exact_rng": exact,
        }

    # ------------------------------------------------------------- lifecycle
    def clear(self) -> None:
        """Forget every trajectory and the cache (ids keep increasing, RNG continues)."""
        with self._lock:
            self.index = []
            self._memory.clear()
            self._cache.clear()

    def clear_cache(self) -> None:
        """Drop the in-memory cache (auto-saved trajectories are re-read when sampled)."""
        with self._lock:
            self._cache.clear()

    def _check(self) -> None:
        if self.closed:
            raise ReplayBufferError(
                "The trajectory buffer is closed",
                expected="an open buffer",
                found="close() was called",
                fix="build a new buffer",
            )
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Finish pending auto-save writes, stop the writer thread, re-raise its error."""
        if self.closed:
            return
        self.closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def __enter__(self) -> "TrajectoryReplayBuffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
