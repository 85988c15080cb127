"""R-ASYNC-1..4 and R-CS-4: point-in-time background saves, surfaced errors, drain on close."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.snapshot import save as save_mod

from helpers import assert_same_state, fill, make


def big(seed=0):
    buf = ReplayBuffer(20000, {"obs": ((64,), "float32")}, sampler="prioritized",
                       segment_bytes=64 << 10, seed=seed)
    rng = np.random.default_rng(seed)
    buf.add({"obs": rng.random((20000, 64)).astype(np.float32)})  # full: every add overwrites
    return buf


@pytest.mark.timeout(60)
def test_async_snapshot_is_point_in_time_under_concurrent_writes(tmp_path):
    buf = big()
    buf.dumps(tmp_path / "sync")  # the reference state at the same logical step
    handle = buf.dumps_async(tmp_path / "async", incremental=False)
    stop = threading.Event()

    def hammer():
        rng = np.random.default_rng(1)
        while not stop.is_set():
            buf.add({"obs": rng.random((64, 64)).astype(np.float32)})
            buf.update_priority(rng.integers(0, 20000, 32), rng.random(32))
    worker = threading.Thread(target=hammer)
    worker.start()
    handle.wait(timeout=50)
    stop.set()
    worker.join()
    a = ReplayBuffer(20000, {"obs": ((64,), "float32")}, sampler="prioritized")
    b = ReplayBuffer(20000, {"obs": ((64,), "float32")}, sampler="prioritized")
    a.loads(tmp_path / "sync")
    b.loads(tmp_path / "async")
    assert_same_state(a, b)
    # copy-on-write memory stays below a copy of the buffer
    assert handle.cow_bytes < sum(arr.nbytes for arr in buf.storage.arrays.values())


@pytest.mark.timeout(30)
def test_background_error_is_raised_by_wait_and_not_lost(tmp_path, monkeypatch):
    buf = make()
    fill(buf, 5)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device (injected)")
    monkeypatch.setattr(save_mod, "write_shard", broken)
    handle = buf.dumps_async(tmp_path / "s")
    with pytest.raises(OSError, match="No space left"):
        handle.wait()
    assert not list((tmp_path / "s").glob("snap-*"))
    assert not list((tmp_path / "s").glob(".staging-*"))


@pytest.mark.timeout(30)
def test_unwaited_error_surfaces_on_next_call_and_close(tmp_path, monkeypatch):
    buf = make()
    fill(buf, 5)
    monkeypatch.setattr(save_mod, "write_shard",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("injected")))
    buf.dumps_async(tmp_path / "s")
    with pytest.raises(RuntimeError, match="injected"):
        buf.dumps(tmp_path / "s")
    buf.dumps_async(tmp_path / "s")
    with pytest.raises(RuntimeError, match="injected"):
        buf.close()
    assert buf.closed


@pytest.mark.timeout(30)
def test_close_drains_a_pending_save(tmp_path):
    buf = big()
    handle = buf.dumps_async(tmp_path / "s")
    buf.close()
    assert handle.done()
    other = ReplayBuffer(20000, {"obs": ((64,), "float32")}, sampler="prioritized")
    assert other.loads(tmp_path / "s")["size"] == 20000


@pytest.mark.timeout(30)
def test_second_async_save_waits_for_the_first(tmp_path):
    buf = big()
    first = buf.dumps_async(tmp_path / "s")
    second = buf.dumps_async(tmp_path / "s")
    assert first.done()
    assert second.wait().name == "snap-00000002"
    buf.close()


@pytest.mark.timeout(120)
def test_interpreter_exit_drains_a_pending_save(tmp_path):
    """R-ASYNC-4: a script that ends right after dumps_async (no wait, no close) still
    publishes the snapshot (the drain runs before the thread pools it uses shut down)."""
    import subprocess
    import sys
    script = (
        "import sys, numpy as np\n"
        "from RLA.replay_buffer import ReplayBuffer\n"
        "b = ReplayBuffer(200_000, seed=0)\n"
        "b.add({'obs': np.random.default_rng(0).random((150_000, 32), dtype=np.float32)})\n"
        "b.dumps_async(sys.argv[1])\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "s")],
                         capture_output=True, text=True, timeout=100)
    assert out.returncode == 0 and "failed" not in out.stderr, out.stderr
    ref = ReplayBuffer(200_000, seed=0)
    ref.add({"obs": np.random.default_rng(0).random((150_000, 32), dtype=np.float32)})
    loaded = ReplayBuffer(200_000, seed=1)
    loaded.loads(tmp_path / "s")
    assert_same_state(loaded, ref)
