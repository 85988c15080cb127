"""`rla buffer ...`, `python -m RLA.replay_buffer` and the per-step run snapshots."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.run_snapshots import (load_run_buffer, run_buffer_steps,
                                             save_run_buffer)
from rla_scripts.cli import main as rla

from helpers import assert_same_state, fill, make

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def store(tmp_path):
    buf = make(sampler="prioritized")
    fill(buf, 25)
    buf.dumps(tmp_path / "s")
    return tmp_path / "s"


@pytest.mark.timeout(30)
def test_inspect_prints_counts_without_loading(store, capsys):
    assert rla(["buffer", "inspect", str(store), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["world_size"] == 1 and info["shards"][0]["size"] == 50
    assert sum(v["steps"] for v in info["episode_report"].values()) == 50


@pytest.mark.timeout(30)
def test_inspect_prints_structured_and_plain_dtypes_readably(tmp_path, capsys):
    import numpy as np

    from RLA.replay_buffer import ReplayBuffer
    point = np.dtype([("x", "<f4"), ("y", "<f4")])
    buf = ReplayBuffer(8, {"p": ((), point), "t": ((2,), "M8[ms]")})
    buf.add({"p": np.zeros(3, point), "t": np.zeros((3, 2), "M8[ms]")})
    buf.dumps(tmp_path / "s")
    assert rla(["buffer", "inspect", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "field p: [('x', '<f4'), ('y', '<f4')] ()" in out
    assert "field t: <M8[ms] (2,)" in out


@pytest.mark.timeout(30)
def test_verify_detects_a_flipped_byte(store, capsys):
    assert rla(["buffer", "verify", str(store)]) == 0
    seg = sorted((store / "segments" / "r00000").iterdir())[0]
    data = bytearray(seg.read_bytes())
    data[-1] ^= 1
    seg.write_bytes(bytes(data))
    assert rla(["buffer", "verify", str(store)]) == 1
    assert f"{seg.name} fails its checksum" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_split_then_merge_copies_and_records_provenance(store, tmp_path):
    before = sorted(p.name for p in store.rglob("*"))
    assert rla(["buffer", "split", str(store), str(tmp_path / "t"), "--world-size", "3"]) == 0
    assert rla(["buffer", "merge", str(tmp_path / "t"), str(tmp_path / "m")]) == 0
    assert sorted(p.name for p in store.rglob("*")) == before  # sources never moved
    manifest = json.loads(next((tmp_path / "m").glob("snap-*/MANIFEST.json")).read_text())
    prov = manifest["provenance"]
    assert prov["source_world_size"] == 3 and prov["operation"] == "merge"
    assert prov["source"] == str(next((tmp_path / "t").glob("snap-*")).resolve())
    from RLA.replay_buffer.snapshot.inspect import describe
    split = describe(tmp_path / "t")["shards"]
    # the total, 64, over 3 shards (22), grown to the largest share of whole episodes
    assert {r["capacity"] for r in split} == {max(22, max(r["size"] for r in split))}
    total = sum(r["capacity"] for r in split)
    assert describe(tmp_path / "m")["shards"][0]["capacity"] == total  # their sum
    merged = make(capacity=total, sampler="prioritized")
    merged.loads(tmp_path / "m")
    src = make(sampler="prioritized")
    src.loads(store)
    from helpers import multiset
    assert multiset([merged]) == multiset([src])


@pytest.mark.timeout(30)
def test_reshard_bad_world_size_is_one_line_error(store, tmp_path, capsys):
    assert rla(["buffer", "reshard", str(store), str(tmp_path / "x"), "--world-size", "0"]) == 1
    assert "Bad --world-size" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_module_cli_loads_and_samples_once(store):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "RLA.replay_buffer", "--load-path", str(store),
                          "--num-chunks", "7"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "obs: shape=(7, 3)" in out.stdout and "next.obs: shape=(7, 3)" in out.stdout


@pytest.mark.timeout(30)
def test_run_snapshots_per_step_and_resume(tmp_path):
    buf = make(sampler="prioritized")
    fill(buf, 10)
    save_run_buffer(buf, tmp_path / "replay", step=100)
    fill(buf, 10, seed=3)
    save_run_buffer(buf, tmp_path / "replay", step=200, keep_last=5)
    assert run_buffer_steps(tmp_path / "replay") == [100, 200]
    assert (tmp_path / "replay" / "step-200" / "MANIFEST.json").is_file()
    resumed = load_run_buffer(None, tmp_path / "replay")
    assert_same_state(buf, resumed)
    older = load_run_buffer(make(sampler="prioritized"), tmp_path / "replay", step=100)
    assert len(older) == 20
    with pytest.raises(ReplayBufferError, match="No replay snapshot for step 150"):
        load_run_buffer(None, tmp_path / "replay", step=150)


@pytest.mark.timeout(30)
def test_run_snapshot_options_reach_the_save_or_are_refused(tmp_path):
    """``save_replay_buffer(buffer, dedup=...)`` reaches ``dumps``; a trajectory buffer, which
    has no such options, refuses them instead of dropping them silently."""
    import numpy as np

    from RLA.replay_buffer import ReplayBuffer, TrajectoryReplayBuffer
    from test_ted import SCHEMA, ted_buffer
    buf = ted_buffer(steps=60)
    snap = save_run_buffer(buf, tmp_path / "replay", step=5, dedup={"next.obs": "obs"})
    shard = json.loads((snap / "rank-00000.json").read_text())
    assert shard["dedup"] == {"next.obs": "obs"}
    assert_same_state(buf, load_run_buffer(ReplayBuffer(300, SCHEMA, num_envs=2),
                                           tmp_path / "replay"))
    traj = TrajectoryReplayBuffer()
    traj.add_trajectories([{"obs": np.zeros((3, 2), np.float32)}])
    for options in ({"dedup": {"next.obs": "obs"}}, {"asynchronous": True}):
        with pytest.raises(ReplayBufferError, match="takes no ReplayBuffer options") as err:
            save_run_buffer(traj, tmp_path / "traj", step=5, **options)
        assert next(iter(options)) in str(err.value)
    assert not (tmp_path / "traj" / "step-5").exists()
    traj.close()


@pytest.fixture()
def run_with_buffer(tmp_path):
    """A run made by make_run whose replay folder holds one snapshot of 50 transitions."""
    from RLA.query.testing import make_run

    root = tmp_path / "data"
    run = make_run(root, task="rb", params={"seed": 0}, types=("log", "code", "replay"))
    buf = make(sampler="prioritized")
    fill(buf, 25)
    save_run_buffer(buf, run.replay_dir, step=100)
    return root, run


@pytest.mark.timeout(60)
def test_buffer_tools_take_a_run_index(run_with_buffer, tmp_path, capsys):
    root, run = run_with_buffer
    assert rla(["buffer", "inspect", run.index, "--data-root", str(root), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["shards"][0]["size"] == 50 and info["snapshot"] == "step-100"
    assert rla(["buffer", "verify", f"{run.date}/{run.name[:8]}", "--data-root", str(root)]) == 0
    assert "files" in capsys.readouterr().out
    assert rla(["buffer", "split", run.index, str(tmp_path / "two"), "--world-size", "2",
                "--data-root", str(root)]) == 0
    assert len(json.loads(next((tmp_path / "two").glob("*/MANIFEST.json")).read_text())["shards"]) == 2


@pytest.mark.timeout(60)
def test_a_run_without_replay_snapshots_is_a_clear_error(run_with_buffer, capsys):
    from RLA.query.testing import make_run

    root, _ = run_with_buffer
    bare = make_run(root, task="rb", params={"seed": 1})
    assert rla(["buffer", "inspect", bare.index, "--data-root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "has no replay snapshots" in err and "save_replay_buffer" in err and "Traceback" not in err


@pytest.mark.timeout(60)
def test_neither_a_path_nor_a_run_is_a_clear_error(run_with_buffer, capsys):
    root, _ = run_with_buffer
    assert rla(["buffer", "verify", "no/such/thing", "--data-root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "neither a snapshot path nor a run" in err and "Traceback" not in err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["-m", "rla_scripts.cli", "buffer", "inspect", "--json"],
                                     ["-m", "RLA.replay_buffer", "--load-path"]])
def test_a_closed_pipe_ends_quietly(store, command):
    """`rla buffer inspect ... | head`: the reader is gone; no traceback, exit status 141."""
    proc = subprocess.Popen([sys.executable, *command, str(store)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=50) == 141 and "Traceback" not in err, err


@pytest.mark.timeout(30)
def test_a_missing_path_without_data_root_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLA_DATA_ROOT", raising=False)
    assert rla(["buffer", "verify", str(tmp_path / "nope")]) != 0
    err = capsys.readouterr().err
    assert "No snapshot store at" in err and "no such path" in err


@pytest.mark.timeout(30)
def test_fork_carries_intact_step_snapshots_and_skips_a_damaged_one(tmp_path):
    """Resuming at step 300: step-100 lost a segment (warned, left behind), step-200 and
    step-300 come over whole, step-400 is after the resume point; no staging is left."""
    import shutil as sh
    import warnings

    from RLA.replay_buffer.run_snapshots import fork_run_snapshots
    buf = make()
    for step in (100, 200, 300, 400):
        fill(buf, 10, seed=step)
        save_run_buffer(buf, tmp_path / "a", step=step, incremental=False)
    shard = json.loads((tmp_path / "a" / "step-100" / "rank-00000.json").read_text())
    (tmp_path / "a" / shard["segments"][0]["file"]).unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        carried = fork_run_snapshots(tmp_path / "a", tmp_path / "b", 300, sh.copy2)
    assert carried == ["step-200", "step-300"]
    assert any("step-100 is damaged" in str(w.message) for w in caught)
    assert not list((tmp_path / "b").glob(".staging-*"))
    assert run_buffer_steps(tmp_path / "b") == [200, 300]
    assert_same_state(load_run_buffer(None, tmp_path / "b", step=300),
                      load_run_buffer(None, tmp_path / "a", step=300))
