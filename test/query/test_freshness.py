"""What a process remembers between queries never hides a change it promises to show.

Structure changes (runs created, deleted, archived) show at once; a live run's files are
checked on every query; a settled run's files at least every ``recheck_s`` seconds, or at
once with ``verify=True``.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import RLA.query.tree as tree_module
from RLA.query import Catalog, list_runs, parse_query, select_runs
from RLA.query.testing import make_run, write_progress
from RLA.query.warm import SETTLE_S, WARM

OLD = time.time() - 10 * SETTLE_S  # a time long enough ago for every run to count as settled


@pytest.fixture(autouse=True)
def forget_warm_state():
    WARM.reset()
    yield
    WARM.reset()


def age_tree(root: Path, when: float = OLD) -> None:
    """Set every file and directory of ``root`` to an old mtime (files first, then dirs)."""
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (when, when))
        os.utime(dirpath, (when, when))


def progress_of(root: Path, where: str) -> Path:
    return Path(list_runs(root, where=where)["log_dir"].iloc[0]) / "progress.csv"


def rewrite_keeping_mtime(path: Path, values) -> None:
    """Change a run's progress.csv and give it back an old mtime (a hand edit of an ended run)."""
    write_progress(path, {"return": values})
    os.utime(path, (OLD + 1, OLD + 1))


@pytest.mark.timeout(60)
def test_a_settled_run_changed_by_hand_shows_with_verify(db):
    age_tree(db)
    where = "env == 'Hopper' and algo == 'sac' and seed == 0"
    path = progress_of(db, where)
    rewrite_keeping_mtime(path, [1.0, 2.0, 4242.0])
    # Within recheck_s the settled run is not stat'ed again in this process ...
    assert list_runs(db, where=where)["last(return)"].iloc[0] != 4242.0
    # ... verify=True checks every file now.
    assert list_runs(db, where=where, verify=True)["last(return)"].iloc[0] == 4242.0


@pytest.mark.timeout(60)
def test_a_settled_run_is_checked_again_after_recheck_s(db):
    age_tree(db)
    where = "env == 'Walker' and algo == 'td3' and seed == 1"
    path = progress_of(db, where)
    rewrite_keeping_mtime(path, [7.0, 77.0])
    with Catalog(db, recheck_s=0.0) as catalog:
        assert select_runs(catalog, where=where).runs[0].record.metrics["return"][0] == 77.0


def _last_return_in_new_process(db: Path, where: str, env: dict, verify: bool = False) -> float:
    import subprocess
    import sys

    code = (
        f"from RLA.query import list_runs; "
        f"print(list_runs({str(db)!r}, where={where!r}, verify={verify})['last(return)'].iloc[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return float(out.stdout.strip())


@pytest.mark.timeout(90)
def test_a_new_process_sees_a_hand_edit_with_verify_or_once_the_last_check_is_old(db, subprocess_env):
    import sqlite3

    from RLA.layout import INDEX_DB
    from RLA.query.warm import RECHECK_S

    age_tree(db)
    where = "env == 'Hopper' and algo == 'td3' and seed == 0"
    path = progress_of(db, where)
    rewrite_keeping_mtime(path, [3.0, 333.0])
    # A new process trusts what the index verified (the run is settled, checked just now) ...
    assert _last_return_in_new_process(db, where, subprocess_env) != 333.0
    # ... verify=True checks every file now ...
    assert _last_return_in_new_process(db, where, subprocess_env, verify=True) == 333.0
    rewrite_keeping_mtime(path, [3.0, 444.0, 1.0])
    with sqlite3.connect(db / INDEX_DB) as conn:  # ... and so does the first query after RECHECK_S
        conn.execute("UPDATE checks SET checked_at = checked_at - ?", (RECHECK_S + 1,))
        conn.execute("DELETE FROM meta WHERE key = 'due_from'")  # the bound on check times: unknown
    assert _last_return_in_new_process(db, where, subprocess_env) == 1.0


@pytest.mark.timeout(60)
def test_a_running_run_is_checked_on_every_query(tmp_path):
    root = tmp_path / "data"
    layout = make_run(root, task="live", params={"seed": 0}, curves={"return": [1.0]}, status="running")
    age_tree(root)  # old files, but run.json says running: never settled
    assert list_runs(root)["last(return)"].iloc[0] == 1.0
    write_progress(layout.log_dir / "progress.csv", {"return": [1.0, 5.0]})
    os.utime(layout.log_dir / "progress.csv", (OLD + 5, OLD + 5))
    assert list_runs(root)["last(return)"].iloc[0] == 5.0


@pytest.mark.timeout(60)
def test_runs_created_and_deleted_in_a_settled_tree_show_at_once(db):
    age_tree(db)
    assert len(list_runs(db)) == 11
    new = make_run(
        db,
        task="mujoco",
        params={"env": "Humanoid", "algo": "sac", "seed": 0, "lr": 1.0},
        curves={"return": [9.0]},
    )
    assert len(list_runs(db, where="env == 'Humanoid'")) == 1
    shutil.rmtree(new.log_dir)
    shutil.rmtree(new.code_dir)
    assert len(list_runs(db, where="env == 'Walker'")) == 4
    assert len(list_runs(db)) == 11


@pytest.mark.timeout(60)
def test_a_listing_taken_right_after_a_change_is_taken_again(tmp_path):
    # A run added in the same timestamp tick as the last listing leaves the day directory's
    # mtime as it was; the listing was "racy" (too close to the mtime), so it is not trusted.
    root = tmp_path / "data"
    first = make_run(root, task="t", params={"seed": 0})
    days = [first.log_dir.parent, first.code_dir.parent]
    assert len(list_runs(root)) == 1
    ticks = [day.stat().st_mtime_ns for day in days]
    second = make_run(root, task="t", params={"seed": 1})
    assert [second.log_dir.parent, second.code_dir.parent] == days
    for day, tick in zip(days, ticks):
        os.utime(day, ns=(tick, tick))  # as if each change fell in the tick of the last listing
    assert len(list_runs(root)) == 2


@pytest.mark.timeout(60)
def test_unchanged_old_directories_are_not_listed_again(db, monkeypatch):
    age_tree(db)
    list_runs(db)
    scans = []
    original = os.scandir

    def scandir(path):
        scans.append(path)
        return original(path)

    monkeypatch.setattr(tree_module.os, "scandir", scandir)
    list_runs(db)
    assert scans == []


QUERIES = [
    "env == 'Hopper'",
    "algo in ['sac', 'td3'] and seed == 1",
    "lr >= 2e-3 and env != 'Walker'",
    "seed == '1'",
    "seed == 1.0 and algo == 'sac'",
    "not env == 'Hopper' and seed in [0, 2]",
    "lr is None",
    "env == 'Ant' and status == 'unknown'",
    "matches(env, '^H') and seed < 1",
    "net.hidden == 64 and lr > 1e-3",
    "algo == 'ppo' or seed == 1",
    "seed > 'a' and env == 'Ant'",
    "task == 'mujoco' and algo == 'sac'",
    "last('return') > 20 and env == 'Walker'",
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", QUERIES)
def test_the_prefilter_selects_exactly_what_row_by_row_evaluation_selects(db, text):
    make_run(
        db,
        task="mujoco",
        params={"env": "Hopper", "algo": "sac", "seed": "1", "lr": "0.002"},
        curves={"return": [30.0]},
    )
    make_run(
        db,
        task="mujoco",
        params={"env": ["Hopper", "Ant"], "algo": "td3", "seed": True, "lr": None},
        curves={"return": [30.0]},
    )
    query = parse_query(text)
    everything = select_runs(db, include_broken=True).runs
    expected = sorted(row.index for row in everything if query.matches(row.view()))
    assert sorted(row.index for row in select_runs(db, where=text, include_broken=True).runs) == expected


@pytest.mark.timeout(60)
def test_a_run_found_before_its_files_exist_is_read_when_they_appear(tmp_path):
    # Writers create a run's folders first and its files next: a query in between sees a run
    # without files, which must not count as settled (it would not be read again for 30 s).
    root = tmp_path / "data"
    layout = make_run(root, task="t", params={"seed": 0}, curves={"return": [1.0, 2.0]})
    files = {
        p: p.read_bytes()
        for p in (
            layout.log_dir / "run.json",
            layout.log_dir / "progress.csv",
            layout.code_dir / "parameter.json",
        )
    }
    for path in files:
        path.unlink()
    age_tree(root)
    assert list_runs(root)["n_rows"].tolist() == [0]
    for path, data in files.items():
        path.write_bytes(data)
    assert list_runs(root)["last(return)"].tolist() == [2.0]


@pytest.mark.timeout(60)
def test_a_running_runs_status_follows_its_process_between_queries(tmp_path):
    # No file changes when a training process dies: what a process remembers of the run
    # (its record, its frame cells) must not freeze the status it showed last time.
    import json
    import subprocess
    import sys

    root = tmp_path / "data"
    layout = make_run(root, task="live", params={"seed": 0}, curves={"return": [1.0]}, status="running")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        info_path = layout.log_dir / "run.json"
        info = json.loads(info_path.read_text())
        info["pid"] = child.pid  # the run's training process
        info_path.write_text(json.dumps(info))
        age_tree(root)
        assert list_runs(root)["status"].tolist() == ["running"]
        child.kill()
        child.wait(timeout=10)
        assert list_runs(root)["status"].tolist() == ["crashed"]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
