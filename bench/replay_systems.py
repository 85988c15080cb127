"""The replay benchmark's workloads and the systems it measures on them: RLA, TorchRL
(``rb.dumps``/``rb.loads``) and SB3-style pickling, each saved durably and loaded cold, in the
saving process and in a fresh one (``python -m bench.bench_replay --load-worker``)."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from bench.replay_measure import MB, drop_cache, du, measure, med

#: Untimed first save + load of every system (RLA, TorchRL, pickle alike): on the benchmark VM
#: whichever system ran first after the disk limits loaded up to 1.6x slower than the same
#: code run later (guest memory handed back to the host during their pauses).
WARMUP = 1


def pixel_data(n: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (n + 1, 3, 84, 84), dtype=np.uint8)
    done = np.zeros(n, dtype=bool)
    done[999::1000] = True
    return {"obs": frames[:-1], "next": {"obs": frames[1:]}, "action": rng.random((n, 6), np.float32),
            "reward": rng.random((n, 1), np.float32), "done": done}


def state_data(n: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    obs = rng.random((n + 1, 17), dtype=np.float32)
    done = np.zeros(n, dtype=bool)
    done[999::1000] = True
    return {"obs": obs[:-1], "next": {"obs": obs[1:]}, "action": rng.random((n, 6), np.float32),
            "reward": rng.random((n, 1), np.float32), "done": done}


def logical_bytes(data: Dict[str, Any]) -> int:
    total = 0
    for v in data.values():
        total += logical_bytes(v) if isinstance(v, dict) else v.nbytes
    return total


def flat(data: Dict[str, Any], prefix: str = "") -> Dict[str, np.ndarray]:
    out = {}
    for k, v in data.items():
        out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


# --------------------------------------------------------------------------- systems
def rla_case(tmp: Path, data: Dict[str, Any], cap: int, sampler: str, reps: int,
             workload: str, paged_too: bool = False,
             dedup: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """RLA's durable save and cold load. ``paged_too`` also loads every saved snapshot
    through the page cache (``RLA_REPLAY_DIRECT_IO=0``) next to the default O_DIRECT reads,
    alternating which of the two goes first, so both are measured under the same conditions.
    ``dedup`` saves with TED dedup (``dumps(..., dedup=...)``), checked on the data."""
    from RLA.replay_buffer import ReplayBuffer
    from RLA.replay_buffer.snapshot import file_io as fio
    opts = {"alpha": 0.6, "beta": 0.4} if sampler == "prioritized" else None
    n = len(data["done"])
    buf = ReplayBuffer(cap, sampler=sampler, sampler_options=opts, seed=0)
    step = 5000
    for i in range(0, n, step):
        buf.add({k: (v[i:i + step] if not isinstance(v, dict) else
                     {kk: vv[i:i + step] for kk, vv in v.items()}) for k, v in data.items()})
    if sampler == "prioritized":
        rng = np.random.default_rng(2)
        for _ in range(10):
            _, idx, _ = buf.sample(256)
            buf.update_priority(idx, rng.random(256))
    logical = logical_bytes(data) * len(buf) // n
    saves: List[Dict[str, float]] = []
    loads: Dict[bool, List[Dict[str, float]]] = {False: [], True: []}
    fresh: List[Dict[str, float]] = []
    exact = {False: True, True: True}
    assert fio.direct_reads_default(), "run the benchmark without RLA_REPLAY_DIRECT_IO=0 (on a " \
        "file system with O_DIRECT)"
    for rep in range(reps + WARMUP):
        store = tmp / "rla"
        shutil.rmtree(store, ignore_errors=True)
        saves.append(measure(lambda: buf.dumps(store, incremental=False, dedup=dedup)))
        disk = du(store)
        for direct in ([rep % 2 == 1, rep % 2 == 0] if paged_too else [True]):
            drop_cache(store)
            fresh_buf = ReplayBuffer(cap, sampler=sampler, sampler_options=opts, seed=9)
            loads[direct].append(measure(lambda: fresh_buf.loads(store, direct_reads=direct)))
            rng_state = buf.rng.bit_generator.state  # compare draws without advancing buf
            same = fresh_buf.cursor == buf.cursor and all(
                np.array_equal(fresh_buf.storage.arrays[k][:len(buf)], a[:len(buf)])
                for k, a in buf.storage.arrays.items()) and np.array_equal(
                np.asarray(fresh_buf.sample(64)[1]), np.asarray(buf.sample(64)[1]))
            buf.rng.bit_generator.state = rng_state
            exact[direct] = exact[direct] and bool(same)
            fresh_buf.close()
        fresh.append(fresh_load("rla", store, cap, sampler))
    label = f"RLA ({sampler}, TED dedup)" if dedup else f"RLA ({sampler})"
    rows = [row(workload, label, logical, disk, saves[WARMUP:],
                loads[True][WARMUP:], exact[True], fresh[WARMUP:])]
    if paged_too:
        rows.append(row(workload, f"RLA ({sampler}, page-cache load)", logical, disk,
                        saves[WARMUP:], loads[False][WARMUP:], exact[False]))
    # incremental: 1% append after a full snapshot (B4)
    if workload.startswith("B2") and not dedup:
        store = tmp / "rla-inc"
        shutil.rmtree(store, ignore_errors=True)
        buf.dumps(store)
        full = du(store)
        k = max(1, cap // 100)
        buf.add({kk: (vv[:k] if not isinstance(vv, dict) else {a: b[:k] for a, b in vv.items()})
                 for kk, vv in data.items()})
        inc = measure(lambda: buf.dumps(store))
        rows.append({"workload": "B4 1% append", "system": "RLA incremental",
                     "save_s": round(inc["s"], 4), "written_MB": round(inc["written"] / MB, 1),
                     "full_MB": round(full / MB, 1),
                     "written/full": round(inc["written"] / full, 4)})
        shutil.rmtree(store, ignore_errors=True)
    buf.close()
    shutil.rmtree(tmp / "rla", ignore_errors=True)
    return rows


def torchrl_build(cap: int, seed: int, flat: bool = False) -> Any:
    """An empty TorchRL buffer like the benchmark's (LazyTensorStorage, RandomSampler);
    ``flat``: with TorchRL's own TED dedup, ``FlatStorageCheckpointer``."""
    import torch
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.data.replay_buffers.checkpointers import FlatStorageCheckpointer
    from torchrl.data.replay_buffers.samplers import RandomSampler
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(cap), sampler=RandomSampler(),
                                batch_size=256, generator=torch.Generator().manual_seed(seed))
    if flat:
        rb.storage.checkpointer = FlatStorageCheckpointer()
    return rb


def load_worker(system: str, path: str, cap: int, sampler: str) -> None:
    """In a fresh process: warm the library up with a tiny save + load and build the empty
    target (untimed), then time one cold load and print ``{"s", "cpu_s"}`` (CPU: user +
    system of every thread during the load)."""
    import resource
    warm = Path(tempfile.mkdtemp(prefix="rla-bench-warm-"))
    try:  # a real process has used its library before it loads: pay one-time costs untimed
        if system == "rla":
            from RLA.replay_buffer import ReplayBuffer
            opts = {"alpha": 0.6, "beta": 0.4} if sampler == "prioritized" else None
            tiny = ReplayBuffer(16, sampler=sampler, sampler_options=opts, seed=0)
            tiny.add({"x": np.zeros((8, 4), np.float32)})
            tiny.dumps(warm / "s")
            ReplayBuffer(16, sampler=sampler, sampler_options=opts, seed=0).loads(warm / "s")
            target = ReplayBuffer(cap, sampler=sampler, sampler_options=opts, seed=9)
            load = lambda: target.loads(path)  # noqa: E731
        elif system in ("torchrl", "torchrl-flat"):
            import torch
            from tensordict import TensorDict
            tiny = torchrl_build(16, 0)
            tiny.extend(TensorDict({"x": torch.zeros(8, 4)}, batch_size=[8]))
            tiny.dumps(warm / "s")
            torchrl_build(16, 0).loads(warm / "s")
            target = torchrl_build(cap, 123, flat=system == "torchrl-flat")
            load = lambda: target.loads(path)  # noqa: E731
        else:
            with open(warm / "s.pkl", "wb") as handle:
                pickle.dump({"x": np.zeros((8, 4))}, handle, protocol=pickle.HIGHEST_PROTOCOL)
            with open(warm / "s.pkl", "rb") as handle:
                pickle.load(handle)
    finally:
        shutil.rmtree(warm, ignore_errors=True)
    if system == "pickle":
        def load() -> None:
            with open(path, "rb") as handle:
                pickle.load(handle)

    def cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_SELF)
        return use.ru_utime + use.ru_stime
    c0, t0 = cpu(), time.perf_counter()
    load()
    print(json.dumps({"s": time.perf_counter() - t0, "cpu_s": cpu() - c0}))


def fresh_load(system: str, path: Path, cap: int, sampler: str = "uniform") -> Dict[str, float]:
    """Drop ``path`` from the page cache, then time its load in a new Python process (the
    real resume case: nothing of the saving process's memory state carries over)."""
    drop_cache(path)
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("RLA_REPLAY_DIRECT_IO", None)
    out = subprocess.run([sys.executable, "-m", "bench.bench_replay", "--load-worker", system,
                          str(path), str(cap), sampler], cwd=root, env=env, capture_output=True,
                         text=True, check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def torchrl_case(tmp: Path, data: Dict[str, Any], cap: int, reps: int,
                 workload: str, flat: bool = False) -> Optional[Dict[str, Any]]:
    """TorchRL's durable save and cold load; ``flat``: its FlatStorageCheckpointer (TED dedup:
    next.observation dropped on save, assumed equal to the next row's observation, rebuilt
    on load), whose exactness is checked on every field here."""
    try:
        import torch
        from tensordict import TensorDict
        from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer  # noqa: F401 - availability
        from torchrl.data.replay_buffers.samplers import RandomSampler  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - the peer is optional
        print(f"[torchrl unavailable: {exc}]")
        return None
    n = len(data["done"])

    def build(seed: int):
        return torchrl_build(cap, seed, flat)
    rb = build(0)
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    td = TensorDict({"observation": t(data["obs"]), "action": t(data["action"]),
                     "done": t(np.zeros((n, 1), bool)), "terminated": t(np.zeros((n, 1), bool)),
                     "truncated": t(np.zeros((n, 1), bool)),
                     "next": {"observation": t(data["next"]["obs"]), "reward": t(data["reward"]),
                              "done": t(data["done"][:, None]),
                              "terminated": t(data["done"][:, None]),
                              "truncated": t(np.zeros((n, 1), bool))}}, batch_size=[n])
    for i in range(0, n, 5000):
        rb.extend(td[i:i + 5000])
    logical = logical_bytes(data) * len(rb) // n
    saves, loads, fresh, exact = [], [], [], True
    for _ in range(reps + WARMUP):
        path = tmp / "torchrl"
        shutil.rmtree(path, ignore_errors=True)
        saves.append(measure(lambda: (rb.dumps(path), os.sync())))
        disk = du(path)
        drop_cache(path)
        rb2 = build(123)
        loads.append(measure(lambda: rb2.loads(path)))
        got, want = rb2.storage._storage, rb.storage._storage
        keys = list(want.keys(True, True)) if flat else ["observation"]
        exact = exact and all(bool((got[k][:len(rb)] == want[k][:len(rb)]).all()) for k in keys)
        rb2 = got = None  # free before the next repetition
        fresh.append(fresh_load("torchrl-flat" if flat else "torchrl", path, cap))
    shutil.rmtree(tmp / "torchrl", ignore_errors=True)
    label = "TorchRL (uniform, FlatStorageCheckpointer)" if flat else "TorchRL (uniform)"
    return row(workload, label, logical, disk, saves[WARMUP:], loads[WARMUP:],
               exact, fresh[WARMUP:])


def pickle_case(tmp: Path, data: Dict[str, Any], cap: int, reps: int,
                workload: str) -> Dict[str, Any]:
    """SB3-style: the whole preallocated buffer object pickled (HIGHEST_PROTOCOL)."""
    n = len(data["done"])
    arrays = {k: np.zeros((cap, *v.shape[1:]), v.dtype) for k, v in flat(data).items()}
    for k, v in flat(data).items():
        arrays[k][:min(n, cap)] = v[-min(n, cap):]
    obj = {"arrays": arrays, "pos": n % cap, "full": n >= cap}
    logical = logical_bytes(data) * min(n, cap) // n
    saves, loads, fresh = [], [], []
    for _ in range(reps + WARMUP):
        path = tmp / "buffer.pkl"

        def save() -> None:
            with open(path, "wb") as handle:
                pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)
                handle.flush()
                os.fsync(handle.fileno())
        saves.append(measure(save))
        disk = du(path)
        drop_cache(path)

        def load() -> None:
            with open(path, "rb") as handle:
                pickle.load(handle)
        loads.append(measure(load))
        fresh.append(fresh_load("pickle", path, cap))
        path.unlink()
    return row(workload, "SB3-style pickle", logical, disk, saves[WARMUP:], loads[WARMUP:],
               True, fresh[WARMUP:])


def row(workload: str, system: str, logical: int, disk: int, saves: List[Dict[str, float]],
        loads: List[Dict[str, float]], exact: bool,
        fresh: Optional[List[Dict[str, float]]] = None) -> Dict[str, Any]:
    save_s, load_s = med([s["s"] for s in saves]), med([s["s"] for s in loads])
    extra: Dict[str, Any] = {}
    if fresh:
        fresh_s = med([f["s"] for f in fresh])
        extra = {"fresh_load_s": round(fresh_s, 3), "fresh_load_MB/s": round(logical / fresh_s / MB),
                 "fresh_load_min_MB/s": round(logical / max(f["s"] for f in fresh) / MB),
                 "fresh_load_max_MB/s": round(logical / min(f["s"] for f in fresh) / MB),
                 "fresh_load_cpu_s": round(med([f["cpu_s"] for f in fresh]), 3)}
    return extra | {"workload": workload, "system": system, "logical_MB": round(logical / MB, 1),
            "disk_MB": round(disk / MB, 1), "save_s": round(save_s, 3),
            "save_MB/s": round(logical / save_s / MB), "load_s": round(load_s, 3),
            "load_MB/s": round(logical / load_s / MB),
            "written_MB": round(med([s["written"] for s in saves]) / MB, 1),
            "peak_extra_MB_save": round(max(s["peak_mb"] for s in saves), 1),
            "peak_extra_MB_load": round(max(s["peak_mb"] for s in loads), 1),
            "load_cpu_s": round(med([s["cpu_s"] for s in loads]), 3), "exact": exact}


def sparse_case(tmp: Path, cap: int) -> Dict[str, Any]:
    from RLA.replay_buffer import ReplayBuffer
    data = state_data(cap // 100)
    buf = ReplayBuffer(cap, seed=0)
    buf.add(data)
    store = tmp / "sparse"
    buf.dumps(store)
    valid = logical_bytes(data)
    out = {"workload": "B3 1%-full", "system": "RLA", "valid_MB": round(valid / MB, 2),
           "disk_MB": round(du(store) / MB, 2), "capacity_MB": round(valid * 100 / MB, 1)}
    shutil.rmtree(store)
    return out
