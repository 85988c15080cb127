"""Each freshness promise of the manual (Querying > "The index is a cache") with its test.

The index trusts what an earlier query verified, also across processes; these tests change
the tree in ways that promise to be seen (another process writes a run, RLA archives one, a
hand edit with --verify, an index emptied by hand with --verify) after the index was built
and its listings trusted (old mtimes).
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from RLA.layout import INDEX_DB
from RLA.query import list_runs
from RLA.query.testing import age_tree as shared_age_tree
from RLA.query.testing import make_run, write_progress
from RLA.query.warm import SETTLE_S

OLD = time.time() - 10 * SETTLE_S


def age_tree(root: Path) -> None:
    shared_age_tree(root, time.time() - OLD)


def rla(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rla_scripts.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120, check=True)


@pytest.fixture
def settled(db: Path) -> Path:
    """The query corpus with old files, queried once: the index holds trusted listings."""
    age_tree(db)
    assert len(list_runs(db)) == 11
    age_tree(db)  # the index's own write does not count
    assert len(list_runs(db)) == 11
    return db


@pytest.mark.timeout(120)
def test_a_run_written_by_another_process_between_two_queries_is_seen(settled, subprocess_env):
    import datetime as dt

    code = ("import datetime as dt, sys; from RLA.query.testing import make_run; "
            "make_run(sys.argv[1], task='mujoco', params={'env': 'Other', 'algo': 'sac', 'seed': 7, 'lr': 1.0}, "
            "when=dt.datetime(2026, 11, 1, 23, 0, 0)); "  # a day folder that already exists
            "make_run(sys.argv[1], task='mujoco', params={'env': 'Other', 'algo': 'td3', 'seed': 8, 'lr': 1.0}, "
            "when=dt.datetime(2026, 12, 24, 1, 0, 0))")  # a new day folder
    subprocess.run([sys.executable, "-c", code, str(settled)], env=subprocess_env, timeout=60, check=True)
    assert dt.date(2026, 11, 1)  # (the corpus's first run is on that day)
    assert sorted(list_runs(settled, where="env == 'Other'")["seed"]) == [7, 8]


@pytest.mark.timeout(120)
def test_a_run_deleted_by_another_process_is_gone_from_the_next_query(settled, subprocess_env):
    frame = list_runs(settled, where="env == 'Walker' and algo == 'td3' and seed == 1")
    log_dir = Path(frame["log_dir"].iloc[0])
    code = "import shutil, sys; [shutil.rmtree(p) for p in sys.argv[1:]]"
    subprocess.run([sys.executable, "-c", code, str(log_dir), str(log_dir).replace("/log/", "/code/")],
                   env=subprocess_env, timeout=60, check=True)
    assert len(list_runs(settled, where="env == 'Walker'")) == 3
    assert len(list_runs(settled)) == 10


@pytest.mark.timeout(120)
def test_a_run_archived_by_rla_moves_to_the_archived_list_at_once(settled, subprocess_env):
    where = "env == 'Hopper' and algo == 'sac' and seed == 1"
    rla(subprocess_env, "archive", "--data-root", str(settled), "--where", where, "--yes")
    assert len(list_runs(settled, where=where)) == 0
    assert len(list_runs(settled, where=where, archived=True)) == 1
    rla(subprocess_env, "archive", "--restore", "--data-root", str(settled), "--where", where, "--yes")
    assert len(list_runs(settled, where=where)) == 1
    assert len(list_runs(settled, archived=True)) == 0


@pytest.mark.timeout(120)
def test_a_running_runs_new_row_is_seen_by_a_new_process(tmp_path, subprocess_env):
    root = tmp_path / "data"
    layout = make_run(root, task="live", params={"seed": 0}, curves={"return": [1.0]}, status="running")
    age_tree(root)
    assert list_runs(root)["last(return)"].tolist() == [1.0]
    write_progress(layout.log_dir / "progress.csv", {"return": [1.0, 6.0]})
    os.utime(layout.log_dir / "progress.csv", (OLD + 5, OLD + 5))
    out = rla(subprocess_env, "list", "--data-root", str(root), "--format", "csv", "--columns", "last(return)")
    assert out.stdout.split() == ["last(return)", "6.0"]


@pytest.mark.timeout(120)
def test_a_hand_edit_of_an_ended_run_is_seen_with_list_verify_and_index_verify(settled, subprocess_env):
    where = "env == 'Walker' and algo == 'sac' and seed == 0"
    path = Path(list_runs(settled, where=where)["log_dir"].iloc[0]) / "progress.csv"
    write_progress(path, {"return": [1.0, 2.0, 5150.0]})
    os.utime(path, (OLD + 1, OLD + 1))
    args = ["list", "--data-root", str(settled), "--format", "csv", "--columns", "last(return)", "--where", where]
    assert rla(subprocess_env, *args).stdout.split()[1] != "5150.0"  # trusted: settled, checked recently
    assert rla(subprocess_env, *args, "--verify").stdout.split()[1] == "5150.0"
    write_progress(path, {"return": [1.0, 2.0, 6160.0, 0.0]})
    os.utime(path, (OLD + 2, OLD + 2))
    assert "index updated" in rla(subprocess_env, "index", "--data-root", str(settled), "--verify").stdout
    assert rla(subprocess_env, *args).stdout.split()[1] == "0.0"


@pytest.mark.timeout(120)
def test_an_index_that_lost_rows_is_repaired_by_verify(settled):
    with sqlite3.connect(settled / INDEX_DB) as conn:  # a damaged cache that still opens
        conn.execute("DELETE FROM runs WHERE key LIKE 'other/%'")
    assert len(list_runs(settled, verify=True)) == 11
    assert len(list_runs(settled)) == 11


@pytest.mark.timeout(120)
def test_a_settled_run_not_returned_is_not_statted(settled, monkeypatch):
    import RLA.query.refresh as refresh

    statted = []
    original = refresh.signature_and_mtime
    monkeypatch.setattr(refresh, "signature_and_mtime", lambda run, *a: statted.append(run) or original(run, *a))
    assert len(list_runs(settled, where="env == 'Hopper'")) == 4
    assert statted == []  # every run is settled and was checked just now


@pytest.mark.timeout(120)
def test_a_day_another_process_relisted_meanwhile_is_stored_untrusted(tmp_path, monkeypatch):
    import datetime as dt

    import RLA.query.refresh as refresh

    root = tmp_path / "data"
    first = make_run(root, task="t", params={"seed": 0}, when=dt.datetime(2026, 5, 1, 1))
    age_tree(root)
    assert len(list_runs(root)) == 1
    make_run(root, task="t", params={"seed": 1}, when=dt.datetime(2026, 5, 1, 2))
    for day in (first.log_dir.parent, first.code_dir.parent):
        os.utime(day, (OLD + 100, OLD + 100))  # changed, and old enough for its listing to be trusted
    original = refresh.read_runs

    def racing(*args, **kwargs):  # another process stores its own listing of the day meanwhile
        with sqlite3.connect(root / INDEX_DB) as conn:
            conn.execute("UPDATE dirs SET mtime_ns = mtime_ns + 1 WHERE day IS NOT NULL")
        return original(*args, **kwargs)

    monkeypatch.setattr(refresh, "read_runs", racing)
    assert len(list_runs(root)) == 2
    with sqlite3.connect(root / INDEX_DB) as conn:
        trusted = [t for (t,) in conn.execute("SELECT trusted FROM dirs WHERE day = 't/2026/05/01'")]
    assert trusted and not any(trusted)  # the next query lists the day again
