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
    assert manifest["provenance"]["source_world_size"] == 3
    merged = make(capacity=64,
                  sampler="prioritized")
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
