"""A save killed at each step of its publish (deterministic fault points, faults.py): a fresh
process then loads exactly the previous snapshot or exactly the new one, never a mix and never
nothing, and the next save removes what the killed one left."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

CHILD = Path(__file__).with_name("publish_child.py")
ROOT = Path(__file__).resolve().parents[2]
#: The fault points of a publish, and which snapshot a kill there must leave.
POINTS = {"replay.save:space-checked": "old", "replay.publish:staging-written": "old",
          "replay.publish:manifest-written": "old", "replay.publish:before-rename": "old",
          "replay.publish:renamed": "new"}


def child(*args: str, fault: Optional[str] = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RLA_FAULT"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if fault:
        env["RLA_FAULT"] = fault
    return subprocess.run([sys.executable, str(CHILD), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def loaded(store: Path) -> int:
    """The one value the store's newest snapshot holds, loaded in a fresh process."""
    out = child("load", str(store))
    assert out.returncode == 0, f"unreadable after the kill: {out.stderr[-600:]}"
    size, values, pixels = out.stdout.split(" ", 1)[0], *out.stdout.split(" ", 1)[1].split("] ")
    assert size == "2000", out.stdout
    values, pixels = json.loads(values + "]"), json.loads(pixels)
    assert len(values) == 1 and pixels == [values[0]], f"a mix of snapshots: {out.stdout}"
    return values[0]


def leftovers(store: Path) -> list:
    """Hidden folders and segment files no snapshot lists."""
    listed = set()
    for shard in store.glob("snap*/rank-*.json"):
        listed.update(seg["file"] for seg in json.loads(shard.read_text())["segments"])
    listed.update(seg["file"] for shard in store.glob("latest/rank-*.json")
                  for seg in json.loads(shard.read_text())["segments"])
    segs = {f"segments/r00000/{p.name}" for p in (store / "segments" / "r00000").iterdir()}
    hidden = [p.name for p in store.iterdir() if p.name.startswith(".")]
    return hidden + sorted(segs - listed)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("snapshot_id", [None, "latest"], ids=["new-id", "overwrite"])
@pytest.mark.parametrize("point", sorted(POINTS))
def test_kill_at_each_publish_step_leaves_old_or_new(tmp_path, point, snapshot_id):
    store = tmp_path / "store"
    extra = [snapshot_id] if snapshot_id else []
    assert child("save", str(store), "1", *extra).returncode == 0
    killed = child("save", str(store), "2", *extra, fault=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-600:]
    assert loaded(store) == (1 if POINTS[point] == "old" else 2)
    assert child("save", str(store), "3", *extra).returncode == 0
    assert loaded(store) == 3
    assert leftovers(store) == []


@pytest.mark.timeout(120)
def test_a_running_save_keeps_its_staging_folder(tmp_path):
    """The sweep removes only abandoned staging folders: one a live save holds stays."""
    from RLA.replay_buffer.snapshot import format as fmt
    from RLA.replay_buffer.snapshot import staging
    from RLA.replay_buffer.snapshot.commit import Committer
    store = tmp_path / "store"
    store.mkdir()
    live = Committer().staging(store, "snap-x")
    dead = store / f"{fmt.STAGING_PREFIX}snap-y-0000"
    dead.mkdir()
    assert staging.sweep(store, fmt.STAGING_PREFIX) == 1
    assert live.is_dir() and not dead.exists()
    staging.release(live)
    assert staging.sweep(store, fmt.STAGING_PREFIX) == 1 and not live.exists()
