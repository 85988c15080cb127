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
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.fs import atomic_write_json
from RLA.replay_buffer import trajectory_files as tf
from RLA.replay_buffer.episodes import episode_counter, make_episode_id
from RLA.replay_buffer.schema import (
    check_field_names,
    dtype_from_json,
    dtype_to_json,
    flatten,
    is_torch,
    to_numpy,
    to_torch,
    unflatten,
)
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import staging as staging_mod
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.commit import Committer
from RLA.replay_buffer.snapshot.save import as_disk_full, next_seq, publish
from RLA.replay_buffer.snapshot.shard_io import store_key

KIND = "TrajectoryReplayBuffer"


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
                if self.auto_save:
                    entry["file"] = f"trajectory_{tid}_{entry['model_weights_id']}.{self.trajectory_format}"
                    self._remember(tid, data)
                    self._ensure_writer()
                    self._queue.put((self.auto_save_path / entry["file"], data))
                else:
                    self._memory[tid] = data
            ids.append(tid)
        return ids

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
        parts: Dict[str, List[np.ndarray]] = {}
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
            raise ReplayBufferError(
                f"Snapshot {store / snap_id} already exists",
                expected="a new snapshot id",
                found="an existing snapshot",
                fix="pass another snapshot_id or overwrite=True",
            )
        staging = Committer().staging(store, snap_id)
        key = store_key(store, self.rank)
        written: List[Path] = []
        try:
            records, entries = self._write_segments(store, self._persisted.get(key, {}), written)
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

    def _write_segments(self, store: Path, known: Dict[int, Dict[str, Any]], written: List[Path]) -> Any:
        """Write (or reuse) one segment per indexed trajectory; returns ``(records by id,
        index entries with their segment)``; ``written`` collects the new files."""
        seg_rel = fmt.segment_dir(self.rank)
        (store / seg_rel).mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:6]  # never rewrite a file an earlier snapshot may list
        records = {}
        with self._lock:
            entries = [dict(e) for e in self.index]
        for entry in entries:
            rec = known.get(entry["id"])
            if rec is None or not (store / rec["file"]).exists():
                data = self._trajectory(entry)
                names = sorted(data)
                rel = f"{seg_rel}/traj-{entry['id']}-{entry['uuid'][:8]}-{token}.seg"
                nbytes, crc = fio.write_views(store / rel, [fio.as_bytes_view(data[n]) for n in names])
                written.append(store / rel)
                rec = {
                    "file": rel,
                    "bytes": nbytes,
                    "crc32": crc,
                    "fields": [
                        {"name": n, "dtype": dtype_to_json(data[n].dtype), "shape": list(data[n].shape)}
                        for n in names
                    ],
                }
            records[entry["id"]] = rec
            entry["segment"] = rec
        fio.fsync_paths(written)
        return records, entries

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
        store, snap_dir, manifest = fmt.resolve(load_path)
        if manifest.get("kind") != KIND:
            raise ReplayBufferError(
                f"{snap_dir} is not a trajectory checkpoint",
                expected=KIND,
                found=repr(manifest.get("kind")),
                fix="load it with ReplayBuffer.loads",
            )
        shards = validate.read_shards(snap_dir, manifest)
        entries = [e for r in sorted(shards) for e in shards[r]["trajectories"]]
        entries.sort(key=lambda e: (int(episode_counter(e["id"])), e["id"]))
        if is_distributed and world_size > 1:
            loads = np.zeros(world_size, dtype=np.int64)
            mine = []
            for e in entries:
                r = int(np.argmin(loads))
                loads[r] += e["length"]
                if r == local_rank:
                    mine.append(e)
            entries = mine
        data = {}
        for e in entries:
            seg = e["segment"]
            arrays = {
                f["name"]: np.empty(tuple(f["shape"]), dtype=dtype_from_json(f["dtype"]))
                for f in seg["fields"]
            }
            fio.read_verified(
                store / seg["file"],
                [fio.as_bytes_view(arrays[f["name"]]) for f in seg["fields"]],
                seg["bytes"],
                seg["crc32"],
            )
            data[e["id"]] = arrays
        counter = max(
            [int(s.get("next_counter", 0)) for s in shards.values()]
            + [int(episode_counter(e["id"])) + 1 for e in entries]
            + [0]
        )
        exact = len(shards) == 1 and not (is_distributed and world_size > 1)
        with self._lock:
            self.clear()
            for e in entries:
                e = {k: v for k, v in e.items() if k != "segment"}
                self.index.append(e)
                if self.auto_save:
                    e["file"] = f"trajectory_{e['id']}_{e['model_weights_id']}.{self.trajectory_format}"
                    self._remember(e["id"], data[e["id"]])
                    self._ensure_writer()
                    self._queue.put((self.auto_save_path / e["file"], data[e["id"]]))
                else:
                    self._memory[e["id"]] = data[e["id"]]
            self.next_counter = counter
            if is_distributed:
                self.rank, self.world_size = int(local_rank), int(world_size)
            if exact:
                self.rng.bit_generator.state = shards[min(shards)]["rng"]
            else:
                base = shards[min(shards)].get("seed")
                self.rng = np.random.default_rng(
                    np.random.SeedSequence(int(base) if isinstance(base, int) else 0, spawn_key=(self.rank,))
                )
            self.return_torch = bool(shards[min(shards)].get("return_torch"))
        return {
            "snapshot": str(snap_dir),
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
