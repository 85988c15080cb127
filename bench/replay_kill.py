"""B5, the replay benchmark's crash case: a save SIGKILLed at a random moment, then a load.

Every system saves a buffer whose rows all hold one value over a snapshot whose rows all hold
the previous value, in a child process killed U(0, 1.2 x T) after it starts saving, T being
the longer of two uninterrupted saves of the same kind (over an existing snapshot); the
parent then loads what is on disk and classifies it:

- ``old`` / ``new``: every row holds the previous / the new value (a clean outcome);
- ``mixed``: rows of both values, or a length that is neither (a silently torn snapshot);
- ``unreadable``: the load raised (the old snapshot is lost too, but the user is told).

    python -m bench.replay_kill child SYSTEM PATH VALUE FRAMES   # what the parent runs
"""
from __future__ import annotations

import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

#: Systems and how each saves: RLA publishes a new snapshot (atomic rename of a manifest);
#: TorchRL's rb.dumps writes its files in place; SB3-style pickling rewrites one file.
SYSTEMS = ("rla", "torchrl", "pickle")
LABELS = {"rla": "RLA", "torchrl": "TorchRL (rb.dumps)", "pickle": "SB3-style pickle"}
SHAPE = (3, 84, 84)
B5_NOTE = ("B5 kills every system's save the same way: a child process fills a buffer whose "
           "rows all hold one value and saves it over the previous value's snapshot; SIGKILL "
           "at U(0, 1.2 x T), T the longer of two uninterrupted durable saves of that system "
           "over an existing snapshot; the parent loads what is on disk. TorchRL's rb.dumps "
           "and pickling overwrite in place; RLA publishes a new snapshot by renaming its "
           "manifest. B5 runs once, after the timed runs.")


def _frames(frames: int, value: int) -> Dict[str, np.ndarray]:
    pix = np.full((frames, *SHAPE), value % 256, np.uint8)
    return {"obs": pix, "next_obs": pix.copy(), "v": np.full(frames, value, np.int64)}


def child(system: str, path: str, value: int, frames: int) -> None:
    """Fill a buffer with ``value``, print ``ready``, save it to ``path``, print the time."""
    data = _frames(frames, value)
    if system == "rla":
        from RLA.replay_buffer import ReplayBuffer
        buf = ReplayBuffer(frames, seed=value)
        buf.add(data)
        save = lambda: buf.dumps(path, keep_last=2)  # noqa: E731
    elif system == "torchrl":
        import torch
        from tensordict import TensorDict

        from bench.replay_systems import torchrl_build
        rb = torchrl_build(frames, value)
        rb.extend(TensorDict({k: torch.from_numpy(v) for k, v in data.items()},
                             batch_size=[frames]))
        save = lambda: (rb.dumps(path), os.sync())  # noqa: E731
    else:
        obj = {"arrays": data, "pos": 0, "full": True}

        def save() -> None:
            with open(path, "wb") as handle:
                pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)
                handle.flush()
                os.fsync(handle.fileno())
    print("ready", flush=True)
    t0 = time.perf_counter()
    save()
    print(f"saved {time.perf_counter() - t0:.4f}", flush=True)


def loaded_values(system: str, path: Path, frames: int) -> np.ndarray:
    """The per-row values of what ``system`` loads from ``path`` (raises if it cannot)."""
    if system == "rla":
        from RLA.replay_buffer import ReplayBuffer
        buf = ReplayBuffer(frames, seed=0)
        buf.loads(path)
        values = buf.storage.arrays["v"][:len(buf)].copy()
        pixels = buf.storage.arrays["obs"][:len(buf), 0, 0, 0].astype(np.int64)
        buf.close()
    elif system == "torchrl":
        from bench.replay_systems import torchrl_build
        rb = torchrl_build(frames, 0)
        rb.loads(path)
        stored = rb.storage._storage
        values = stored["v"][:len(rb)].numpy().copy()
        pixels = stored["obs"][:len(rb), 0, 0, 0].numpy().astype(np.int64)
    else:
        with open(path, "rb") as handle:
            arrays = pickle.load(handle)["arrays"]
        values, pixels = arrays["v"], arrays["obs"][:, 0, 0, 0].astype(np.int64)
    # a row whose payload does not belong to its value is torn too
    return np.where(pixels == values % 256, values, -1)


def _spawn(system: str, path: Path, value: int, frames: int) -> subprocess.Popen:
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.Popen([sys.executable, "-m", "bench.replay_kill", "child", system,
                             str(path), str(value), str(frames)], cwd=root, env=env,
                            stdout=subprocess.PIPE, text=True)


def classify(values: np.ndarray, old: int, new: int, frames: int) -> str:
    kinds = set(np.unique(values).tolist())
    if len(values) == frames and kinds == {old}:
        return "old"
    if len(values) == frames and kinds == {new}:
        return "new"
    return "mixed"


def kill_case(tmp: Path, system: str, trials: int, frames: int, seed: int = 0) -> Dict[str, Any]:
    """``trials`` saves of ``system`` SIGKILLed at U(0, 1.2 x save time); outcome counts."""
    path = tmp / f"kill-{system}" / ("buffer.pkl" if system == "pickle" else "store")
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    times = []
    for value in (1, 2, 3):  # uninterrupted saves; the later two replace a snapshot, as the
        first = _spawn(system, path, value, frames)  # killed ones do
        out, _ = first.communicate(timeout=300)
        times.append(float(out.rsplit("saved", 1)[1]))
    save_s = max(times[1:])  # the window covers a whole save of this kind
    rng = random.Random(seed)
    counts = {"old": 0, "new": 0, "mixed": 0, "unreadable": 0}
    current = 3
    for trial in range(trials):
        value = trial + 4
        proc = _spawn(system, path, value, frames)
        try:
            for _ in range(1000):  # the library may log first (TorchRL does, to stdout)
                line = proc.stdout.readline()
                if not line or line.strip() == "ready":
                    break
            if line.strip() != "ready":
                raise RuntimeError(f"the {system} kill child did not start")
            time.sleep(rng.uniform(0, save_s * 1.2))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
            proc.stdout.close()
        try:
            outcome = classify(loaded_values(system, path, frames), current, value, frames)
        except Exception:  # noqa: BLE001 - any failed load is the outcome being counted
            outcome = "unreadable"
        counts[outcome] += 1
        if outcome == "new":
            current = value
        elif outcome != "old":  # start the next trial from a clean snapshot again
            shutil.rmtree(path.parent, ignore_errors=True)
            path.parent.mkdir(parents=True)
            again = _spawn(system, path, value, frames)
            again.communicate(timeout=300)
            current = value
    shutil.rmtree(path.parent, ignore_errors=True)
    mb = frames * (2 * int(np.prod(SHAPE)) + 8) / 1e6
    return {"workload": "B5 SIGKILL during save", "system": LABELS[system], "trials": trials,
            "logical_MB": round(mb, 1), "save_s": round(save_s, 3), **counts}


def kill_rows(tmp: Path, trials: int, frames: int) -> List[Dict[str, Any]]:
    """B5 for every system that is installed (TorchRL is optional)."""
    rows = []
    for system in SYSTEMS:
        if system == "torchrl":
            try:
                import tensordict  # noqa: F401
                import torchrl  # noqa: F401
            except Exception as exc:  # noqa: BLE001 - the peer is optional
                print(f"[torchrl unavailable for B5: {exc}]")
                continue
        rows.append(kill_case(tmp, system, trials, frames))
        print(f"[B5 {system}] {rows[-1]}", flush=True)
    return rows


if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] != "child":
        raise SystemExit(__doc__)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
