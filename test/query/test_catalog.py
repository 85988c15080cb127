"""The SQLite catalog: a cache that follows the tree (new, changed, deleted, corrupt, concurrent)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from RLA.layout import INDEX_DB
from RLA.query import Catalog, list_runs
from RLA.query.testing import make_run, write_progress


@pytest.mark.timeout(60)
def test_first_query_builds_the_index_file(db):
    assert not (db / INDEX_DB).exists()
    list_runs(db)
    with sqlite3.connect(db / INDEX_DB) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 11
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.timeout(60)
def test_unchanged_runs_are_not_reread(db, monkeypatch):
    list_runs(db)
    import RLA.query.catalog as catalog_module
    calls = []
    original = catalog_module.read_record
    monkeypatch.setattr(catalog_module, "read_record", lambda run, sig=None, **kw: calls.append(run) or original(run, sig, **kw))
    list_runs(db)
    assert calls == []


@pytest.mark.timeout(60)
def test_a_changed_progress_file_is_reread(db):
    frame = list_runs(db, where="env == 'Hopper' and algo == 'sac' and seed == 0")
    log_dir = Path(frame["log_dir"].iloc[0])
    write_progress(log_dir / "progress.csv", {"return": [1.0, 2.0, 999.0]})
    again = list_runs(db, where="env == 'Hopper' and algo == 'sac' and seed == 0")
    assert again["last(return)"].iloc[0] == 999.0


@pytest.mark.timeout(60)
def test_a_new_run_appears_without_any_rebuild(db):
    list_runs(db)
    make_run(db, task="mujoco", params={"env": "New", "algo": "sac", "seed": 9, "lr": 1.0})
    assert len(list_runs(db, where="env == 'New'")) == 1


@pytest.mark.timeout(60)
def test_a_deleted_run_disappears_from_the_index(db):
    frame = list_runs(db, where="env == 'Walker'")
    for log_dir in frame["log_dir"]:
        shutil.rmtree(log_dir)
        shutil.rmtree(str(log_dir).replace(f"{os.sep}log{os.sep}", f"{os.sep}code{os.sep}", 1))
    assert len(list_runs(db)) == 7
    with sqlite3.connect(db / INDEX_DB) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 7


@pytest.mark.timeout(60)
@pytest.mark.parametrize("garbage", [b"this is not a database" * 100, b""])
def test_a_corrupt_index_file_is_rebuilt(db, garbage):
    list_runs(db)
    for suffix in ("-wal", "-shm"):
        Path(str(db / INDEX_DB) + suffix).unlink(missing_ok=True)
    (db / INDEX_DB).write_bytes(garbage)
    assert len(list_runs(db)) == 11
    with sqlite3.connect(db / INDEX_DB) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 11


@pytest.mark.timeout(60)
def test_an_index_of_another_schema_version_is_rebuilt(db):
    list_runs(db)
    with sqlite3.connect(db / INDEX_DB) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    with Catalog(db) as catalog:
        assert len(catalog.records()) == 11
        assert catalog.rebuilt_reason and "schema" in catalog.rebuilt_reason


@pytest.mark.timeout(60)
def test_a_read_only_data_root_falls_back_to_memory(db):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    os.chmod(db, 0o555)
    try:
        with Catalog(db) as catalog:
            assert len(catalog.records()) == 11
            assert catalog.in_memory
    finally:
        os.chmod(db, 0o755)


@pytest.mark.timeout(60)
def test_a_stale_row_never_hides_a_run_on_disk(db):
    list_runs(db)
    with sqlite3.connect(db / INDEX_DB) as conn:
        conn.execute("DELETE FROM runs")  # a cache that lost rows
    assert len(list_runs(db)) == 11


WRITER = textwrap.dedent("""
    import sys, datetime as dt
    from RLA.query.testing import make_run
    root, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(count):
        when = dt.datetime(2026, 1, 1 + worker, 0, 0, i)
        make_run(root, task="conc", params={"worker": worker, "i": i}, curves={"return": [float(i)] * 50},
                 when=when)
""")


@pytest.mark.timeout(120)
def test_concurrent_writers_while_querying(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    writers = [subprocess.Popen([sys.executable, str(script), str(root), str(w), "40"], env=env)
               for w in range(3)]
    seen = []
    deadline = time.monotonic() + 90
    try:
        while any(p.poll() is None for p in writers) and time.monotonic() < deadline:
            frame = list_runs(root)  # querying (and updating the index) while runs are being created
            seen.append(len(frame))
            assert frame["index"].is_unique
    finally:
        for proc in writers:
            proc.wait(timeout=60)
    assert all(p.returncode == 0 for p in writers)
    assert seen == sorted(seen)  # never loses a run once seen
    final = list_runs(root)
    assert len(final) == 120
    assert sorted(final["last(return)"].unique().tolist()) == [float(i) for i in range(40)]


QUERIER = textwrap.dedent("""
    import sys
    from RLA.query import list_runs
    for _ in range(int(sys.argv[2])):
        frame = list_runs(sys.argv[1])
    print(len(frame))
""")


@pytest.mark.timeout(120)
def test_several_processes_refresh_the_same_index(db, tmp_path):
    script = tmp_path / "querier.py"
    script.write_text(QUERIER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    for log_dir in list_runs(db)["log_dir"][:4]:  # make every process find stale rows
        write_progress(Path(log_dir) / "progress.csv", {"return": [7.0]})
    procs = [subprocess.Popen([sys.executable, str(script), str(db), "5"], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=100)[0].strip() for p in procs]
    assert outputs == ["11", "11", "11"]
    assert (list_runs(db)["last(return)"] == 7.0).sum() == 4


@pytest.mark.timeout(60)
def test_an_index_path_that_cannot_be_opened_falls_back_to_memory(db, tmp_path):
    blocked = tmp_path / "not_a_file"
    blocked.mkdir()  # SQLite cannot open a directory, and it is not ours to delete
    with Catalog(db, path=blocked) as catalog:
        assert len(catalog.records()) == 11
        assert catalog.in_memory
    assert blocked.is_dir()
