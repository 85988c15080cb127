"""R-SHARD-1: every save path saves every rank (periodic, requested, SIGTERM, exception), and a
background commit never mixes with the training's own collectives."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import numpy as np
import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer import ReplayBuffer, SaveTriggers
from RLA.replay_buffer.run_snapshots import run_buffer_steps
from RLA.replay_buffer.snapshot import format as fmt

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "trigger_worker.py"


def env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small() -> ReplayBuffer:
    return ReplayBuffer(32, {"v": ((), "int64"), "done": ((), "bool")}, seed=0)


def add(buf: ReplayBuffer, step: int) -> None:
    buf.add({"v": np.array([step]), "done": np.array([False])})


# --------------------------------------------------------------------------- one process
@pytest.mark.timeout(30)
def test_periodic_and_requested_saves_in_one_process(tmp_path):
    buf = small()
    with SaveTriggers(buf, tmp_path, every=4) as saves:
        for step in range(1, 11):
            add(buf, step)
            if step == 6:
                saves.request()
            if step == 9:
                (tmp_path / "SAVE_NOW").touch()
            assert saves.step(step) is False
    assert run_buffer_steps(tmp_path) == [4, 6, 8, 9]
    assert not (tmp_path / "SAVE_NOW").exists()
    back = small()
    back.loads(tmp_path / "step-6")
    assert back.get(np.arange(len(back)))["v"].tolist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.timeout(30)
def test_an_exception_saves_the_last_step_and_propagates(tmp_path):
    buf = small()
    with pytest.raises(ZeroDivisionError):
        with SaveTriggers(buf, tmp_path, every=100) as saves:
            for step in range(1, 5):
                add(buf, step)
                saves.step(step)
            add(buf, 5)
            1 / 0
    assert run_buffer_steps(tmp_path) == [4]
    back = small()
    back.loads(tmp_path)
    assert len(back) == 5  # the state at the failure, saved under the last step reached


@pytest.mark.timeout(60)
def test_sigterm_saves_then_the_process_ends_by_its_signal(tmp_path):
    """The handler only sets a flag; the next step saves, step() says stop, and leaving the
    block re-delivers SIGTERM to the previous handler (here the default: the process ends)."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        import numpy as np
        from RLA.replay_buffer import ReplayBuffer, SaveTriggers
        buf = ReplayBuffer(32, {{"v": ((), "int64")}}, seed=0)
        with SaveTriggers(buf, {str(tmp_path)!r}) as saves:
            for step in range(1, 100):
                buf.add({{"v": np.array([step])}})
                if step == 3:
                    os.kill(os.getpid(), signal.SIGTERM)
                if saves.step(step):
                    print("stop", step, saves.stop_reason, flush=True)
                    break
        print("not reached", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert proc.stdout.split() == ["stop", "3", "signal"]
    assert run_buffer_steps(tmp_path) == [3]


@pytest.mark.timeout(30)
def test_check_every_skips_exchanges_but_never_a_periodic_save(tmp_path):
    sent = []

    def exchange(values):  # one rank alone: the union is its own flags
        sent.append(int(values[-1]))
        return values
    buf = small()
    saves = SaveTriggers(buf, tmp_path, every=5, check_every=3, exchange=exchange)
    with saves:
        for step in range(1, 11):
            add(buf, step)
            if step == 4:
                saves.request()  # waits for the next exchange, at step 5 (periodic)
            if step == 7:
                saves.request()  # ... and this one for step 9
            saves.step(step)
    assert sent == [3, 5, 6, 9, 10, 10]  # steps 3, 6, 9 and periodic 5, 10; then the exit
    assert run_buffer_steps(tmp_path) == [5, 9, 10]


@pytest.mark.timeout(30)
def test_asynchronous_saves_are_drained_on_exit(tmp_path):
    buf = small()
    with SaveTriggers(buf, tmp_path, every=3, asynchronous=True) as saves:
        for step in range(1, 7):
            add(buf, step)
            saves.step(step)
            if step == 3:
                assert saves._pending is not None  # running in the background
    assert saves._pending is None and saves.last_snapshot == tmp_path / "step-6"
    back = small()
    back.loads(tmp_path / "step-6")
    assert len(back) == 6


@pytest.mark.timeout(30)
def test_a_failed_peer_through_exchange_stops_after_saving_its_step(tmp_path):
    """exchange= (no torch): a peer that failed at step 7 makes this rank save step-7 and stop;
    a later step() is refused."""
    from RLA.replay_buffer.save_triggers import FAILED, encode

    def exchange(values):
        return np.maximum(values, encode(FAILED, 7)) if values[-1] >= 6 else values
    buf = small()
    with SaveTriggers(buf, tmp_path, exchange=exchange) as saves:
        for step in range(1, 10):
            add(buf, step)
            if saves.step(step):
                break
        assert (step, saves.stop_reason) == (6, "another rank failed")
        with pytest.raises(ReplayBufferError, match="after the job stopped"):
            saves.step(7)
    assert run_buffer_steps(tmp_path) == [7]


@pytest.mark.timeout(30)
def test_signal_handlers_are_restored_and_bad_arguments_refused(tmp_path):
    before = signal.getsignal(signal.SIGUSR1)
    with SaveTriggers(small(), tmp_path, signals=(signal.SIGUSR1,), exit_on_signal=False):
        assert signal.getsignal(signal.SIGUSR1) != before
    assert signal.getsignal(signal.SIGUSR1) == before
    for bad in ({"every": 0}, {"check_every": -1}):
        with pytest.raises(ReplayBufferError, match="must be at least 1"):
            SaveTriggers(small(), tmp_path, **bad)


@pytest.mark.timeout(30)
def test_several_ranks_without_a_process_group_is_a_clear_error(tmp_path):
    buf = ReplayBuffer(32, {"v": ((), "int64")}, rank=1, world_size=2)
    with pytest.raises(ReplayBufferError, match="reach the other ranks") as err:
        SaveTriggers(buf, tmp_path)
    assert "exchange=" in str(err.value)


@pytest.mark.timeout(30)
def test_exp_manager_triggers_save_into_the_run_replay_dir(manager):
    manager.log_files_gen()
    buf = small()
    with manager.replay_save_triggers(buf, every=2, keep_last=2) as saves:
        for step in range(1, 7):
            add(buf, step)
            saves.step(step)
    assert run_buffer_steps(manager.replay_dir) == [4, 6]
    assert len(manager.load_replay_buffer(small(), step=4)) == 4


# --------------------------------------------------------------------------- four ranks
def run_ranks(scenario: str, tmp_path: Path, world: int = 4) -> Dict[int, dict]:
    """Start ``world`` gloo ranks of trigger_worker.py; returns their reports and codes."""
    store, outdir = tmp_path / "store", tmp_path / "out"
    store.mkdir()
    outdir.mkdir()
    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(WORKER), scenario, str(store), str(outdir),
                               str(r), str(world), str(port)], env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    codes: List[int] = []
    errors: List[str] = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                _, err = proc.communicate()
        codes.append(proc.returncode)
        errors.append(err[-1500:])
    reports = {}
    for r in range(world):
        path = outdir / f"rank-{r}.json"
        reports[r] = json.loads(path.read_text()) if path.exists() else {}
        reports[r]["code"] = codes[r]
        if codes[r] not in (0, 1, -signal.SIGTERM):  # say why a rank died
            reports[r]["stderr"] = errors[r]
    return reports


def shards_of(store: Path, step: int, world: int = 4) -> Dict[int, List[list]]:
    """Every rank's rows in the published snapshot ``step-<step>`` (loaded shard by shard)."""
    snap = store / f"step-{step}"
    manifest = fmt.read_manifest(snap)
    assert manifest["world_size"] == world and len(manifest["shards"]) == world
    rows = {}
    for r in range(world):
        buf = ReplayBuffer(64, rank=r, world_size=world, num_envs=1)
        buf.loads(snap, rank=r, world_size=world)
        rows[r] = buf.get(np.arange(len(buf)))["v"].tolist()
    return rows


def codes(reports: Dict[int, dict]) -> List[int]:
    """Exit codes, with a survivor's teardown abort read as 0: gloo aborts (SIGABRT) a process
    whose peer closed its sockets while it still held them (pytorch/gloo#168, horovod#2907),
    which can happen after a rank ended by its signal or its exception. Such a survivor has
    already saved and written its report, which the tests check."""
    return [0 if rep["code"] == -signal.SIGABRT and rep.get("stopped_at") is not None
            else rep["code"] for rep in reports.values()]


def assert_saved_everywhere(reports: Dict[int, dict], store: Path, step: int) -> None:
    got = shards_of(store, step)
    for r, report in reports.items():
        assert got[r] == report["saved"][str(step)], f"rank {r}, step {step}"


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("scenario,asked", [("request", 7), ("request_file", 8)])
def test_a_request_on_one_rank_saves_every_rank(tmp_path, scenario, asked):
    reports = run_ranks(scenario, tmp_path)
    assert [rep["code"] for rep in reports.values()] == [0, 0, 0, 0], reports
    assert run_buffer_steps(tmp_path / "store") == [5, asked, 10]
    for step in (5, asked, 10):
        assert_saved_everywhere(reports, tmp_path / "store", step)
    assert not (tmp_path / "store" / "SAVE_NOW").exists()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_sigterm_on_one_rank_saves_every_rank_and_stops_all(tmp_path):
    reports = run_ranks("sigterm", tmp_path)
    assert codes(reports) == [0, 0, -signal.SIGTERM, 0], reports
    assert {rep["stopped_at"] for rep in reports.values()} == {6}
    assert {rep["reason"] for rep in reports.values()} == {"signal"}
    assert run_buffer_steps(tmp_path / "store") == [5, 6]
    assert_saved_everywhere(reports, tmp_path / "store", 6)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_exception_on_one_rank_saves_every_rank(tmp_path):
    reports = run_ranks("exception", tmp_path)
    assert [c for r, c in enumerate(codes(reports)) if r != 1] == [0, 0, 0], reports
    assert reports[1]["code"] in (1, -signal.SIGABRT), reports  # its traceback, then exit
    assert reports[1]["reason"] == "injected failure on rank 1"
    assert {reports[r]["reason"] for r in (0, 2, 3)} == {"another rank failed"}
    assert run_buffer_steps(tmp_path / "store") == [4]
    assert_saved_everywhere(reports, tmp_path / "store", 4)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_async_commit_does_not_mix_with_training_collectives(tmp_path):
    """The background commit uses its own gloo group: the main thread's all_reduces, skewed
    across ranks, all give the right sums, and the snapshot publishes with every shard."""
    reports = run_ranks("async", tmp_path, world=2)
    assert [rep["code"] for rep in reports.values()] == [0, 0], reports
    assert [rep["reason"] for rep in reports.values()] == [None, None], reports
    manifest = fmt.read_manifest(tmp_path / "store" / "async")
    assert len(manifest["shards"]) == 2
