"""R-SHARD-1..5: every rank saves (gloo two-phase commit); M -> N loads conserve everything."""
from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.sharding import plan, reshard_snapshot
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import validate
from RLA.replay_buffer.snapshot.shard_io import read_meta
from RLA.replay_buffer.schema import Schema

from helpers import fill, make

torch = pytest.importorskip("torch")
import torch.multiprocessing as mp  # noqa: E402

import dist_workers  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def four_rank_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("sharded") / "store"
    store.mkdir()
    mp.spawn(dist_workers.save_ranks, args=(4, free_port(), str(store), 2), nprocs=4,
             join=True)
    return store


def expected_rows(store: Path):
    rows = []
    for r in range(4):
        rows += json.loads((store / f"expected-{r}.json").read_text())["rows"]
    return sorted(rows)


def longest_episode(store: Path) -> int:
    counts: dict = {}
    for row in expected_rows(store):
        counts[row[0]] = counts.get(row[0], 0) + 1
    return max(counts.values())


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_every_rank_saves_on_every_save_path(four_rank_store):
    for snap in ("periodic", "requested"):
        manifest = fmt.read_manifest(four_rank_store / snap)
        assert manifest["world_size"] == 4
        assert [s["rank"] for s in manifest["shards"]] == [0, 1, 2, 3]
        assert all((four_rank_store / snap / fmt.shard_file(r)).exists() for r in range(4))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_failing_rank_aborts_the_snapshot_everywhere(four_rank_store):
    outcomes = [(four_rank_store / f"outcome-{r}.txt").read_text() for r in range(4)]
    # rank 2's ENOSPC is a DiskFullError there; the others learn the snapshot was not published
    assert outcomes == ["ReplayBufferError", "ReplayBufferError", "DiskFullError",
                        "ReplayBufferError"]
    assert not (four_rank_store / "broken").exists()
    assert not list(four_rank_store.glob(".staging-broken-*"))
    assert fmt.list_snapshots(four_rank_store)[-1][2] == "requested"


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_four_ranks_load_as_six_gloo_ranks(four_rank_store):
    mp.spawn(dist_workers.load_ranks, args=(6, free_port(), str(four_rank_store), "requested"),
             nprocs=6, join=True)
    loaded = [json.loads((four_rank_store / f"loaded-6-{r}.json").read_text()) for r in range(6)]
    rows = sorted(row for part in loaded for row in part["rows"])
    assert rows == expected_rows(four_rank_store)  # multiset, priorities to the bit
    sizes = [part["len"] for part in loaded]
    assert sum(sizes) == len(rows)
    assert max(sizes) - min(sizes) <= max(longest_episode(four_rank_store), 1)
    for part in loaded:
        assert all(0 <= e < part["num_envs"] for e in part["env_ids"])


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_four_to_three_to_four_restores_the_multiset(four_rank_store, tmp_path):
    three = [ReplayBuffer(800, num_envs=3, sampler="prioritized") for _ in range(3)]
    for r, buf in enumerate(three):
        buf.loads(four_rank_store, snapshot="requested", rank=r, world_size=3)
    ids = {}
    for r, buf in enumerate(three):
        g = buf.get(np.arange(len(buf)))
        for ep, env in zip(g["episode_id"].tolist(), g["env_id"].tolist()):
            assert ids.setdefault(ep, (r, env)) == (r, env)  # whole episodes, one env each
    res = reshard_snapshot(four_rank_store / "requested", tmp_path / "three", 3)
    back = reshard_snapshot(res["snapshot"], tmp_path / "four", 4)
    assert fmt.read_manifest(Path(back["snapshot"]))["provenance"]["source_world_size"] == 3
    four = [ReplayBuffer(back["capacity"], num_envs=3, sampler="prioritized") for _ in range(4)]
    for r, buf in enumerate(four):
        buf.loads(tmp_path / "four", rank=r, world_size=4)
    rows_three = sorted(r for b in three for r in dist_workers._rows(b))
    rows_four = sorted(r for b in four for r in dist_workers._rows(b))
    assert rows_three == rows_four == expected_rows(four_rank_store)


@pytest.mark.timeout(60)
def test_plan_is_deterministic_balanced_and_never_splits(tmp_path):
    bufs = [make(capacity=200, rank=r, world_size=4, num_envs=2) for r in range(4)]
    for b in bufs:
        fill(b, 30 + 10 * b.rank, seed=b.rank)
    threads = [threading.Thread(target=b.dumps, args=(tmp_path / "s",),
                                kwargs={"barrier": "file", "barrier_timeout": 30}) for b in bufs]
    [t.start() for t in threads]
    [t.join() for t in threads]
    store, snap, manifest = fmt.resolve(tmp_path / "s")
    shards = validate.read_shards(snap, manifest)
    schema = Schema.from_json(shards[0]["schema"])
    metas = {m: read_meta(store, shards[m], schema) for m in shards}
    policy = {"complete": "keep", "headless": "keep", "open": "carry", "headless_open": "carry"}
    p1 = plan(shards, metas, 3, 10 ** 6, 2, policy)
    reversed_shards = dict(sorted(shards.items(), reverse=True))
    p2 = plan(reversed_shards, metas, 3, 10 ** 6, 2, policy)
    as_ids = lambda p: [[e["id"] for e in rank] for rank in p["ranks"]]  # noqa: E731
    assert as_ids(p1) == as_ids(p2)
    longest = max(e["length"] for rank in p1["ranks"] for e in rank)
    sizes = p1["report"]["sizes"]
    assert max(sizes) - min(sizes) <= longest
    all_ids = [e["id"] for rank in p1["ranks"] for e in rank]
    assert len(all_ids) == len(set(all_ids))
    # new episodes minted after a reshard never collide with loaded ones
    loaded = [make(capacity=400) for _ in range(3)]
    for r, b in enumerate(loaded):
        b.loads(tmp_path / "s", rank=r, world_size=3)
        fill(b, 5, seed=50 + r)
    ids = [set(b.get(np.arange(len(b)))["episode_id"].tolist()) for b in loaded]
    assert not (ids[0] & ids[1]) and not (ids[1] & ids[2]) and not (ids[0] & ids[2])
