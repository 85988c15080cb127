"""A first build of many runs: read in worker processes, stored chunk by chunk.

The threshold and the chunk size are lowered so a few runs take the same path as 100,000.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

import RLA.query.bulk as bulk
import RLA.query.refresh as refresh
from RLA.query import Catalog
from RLA.query.testing import make_run

_COLUMNS = "key, sig, settled, status, start_time, exact, pjson, mjson, record, idx, n_rows, plain"


def _tree(root: Path) -> None:
    for seed in range(11):
        make_run(root, task="t", params={"seed": seed, "lr": 0.1 * seed}, curves={"r": [1.0, float(seed)]})
    broken = make_run(root, task="t", params={"seed": 99})
    (broken.log_dir / "run.json").write_text("{not json", encoding="utf-8")


def _rows(root: Path, db: Path) -> tuple:
    with Catalog(root, path=db) as catalog:
        damaged = catalog.refresh()
        rows = catalog.conn.execute(
            f"SELECT {_COLUMNS} FROM runs JOIN (SELECT key, settled FROM checks) USING (key) ORDER BY key"
        ).fetchall()
        unread = catalog.conn.execute("SELECT * FROM unread").fetchall()
        return rows, unread, sorted(damaged), catalog.generation


@pytest.fixture
def small_bulk(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """Bulk path for 5+ runs, 4 runs a chunk, two processes; records each chunk's size."""
    monkeypatch.setattr(refresh, "PROCESS_THRESHOLD", 5)
    monkeypatch.setattr(bulk, "CHUNK", 4)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    sizes: List[int] = []
    real = bulk._store

    def store(catalog, rows, unread):
        sizes.append(len(rows) + len(unread))
        return real(catalog, rows, unread)

    monkeypatch.setattr(bulk, "_store", store)
    return sizes


@pytest.mark.timeout(120)
def test_a_bulk_build_stores_what_a_one_by_one_build_does(tmp_path: Path, small_bulk, monkeypatch) -> None:
    root = tmp_path / "data"
    _tree(root)
    fast = _rows(root, tmp_path / "bulk.sqlite")
    assert small_bulk == [4, 4, 4], small_bulk  # 12 runs, stored a chunk at a time
    monkeypatch.setattr(refresh, "PROCESS_THRESHOLD", 10**9)
    slow = _rows(root, tmp_path / "one.sqlite")
    assert fast[0] == slow[0] and fast[1] == slow[1] and fast[2] == slow[2]
    assert len(fast[0]) == 11 and len(fast[2]) == 1 and fast[3] > 0


@pytest.mark.timeout(120)
def test_a_build_stopped_half_way_keeps_its_chunks_and_the_next_reads_only_the_rest(
    tmp_path: Path, small_bulk, monkeypatch
) -> None:
    root = tmp_path / "data"
    _tree(root)
    db = tmp_path / "idx.sqlite"
    real = bulk._store
    calls = []

    def failing(catalog, rows, unread):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the user stops the first build
        return real(catalog, rows, unread)

    monkeypatch.setattr(bulk, "_store", failing)
    with pytest.raises(KeyboardInterrupt):
        _rows(root, db)
    with Catalog(root, path=db) as catalog:
        kept = catalog.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        kept += catalog.conn.execute("SELECT count(*) FROM unread").fetchone()[0]
    assert kept == 8
    monkeypatch.setattr(bulk, "_store", real)
    read: List[object] = []
    real_read = refresh.read_runs

    def counted(layouts, *args):
        read.extend(layouts)
        return real_read(layouts, *args)

    monkeypatch.setattr(refresh, "read_runs", counted)
    monkeypatch.setattr(refresh, "PROCESS_THRESHOLD", 10**9)
    again = _rows(root, db)
    assert len(read) == 4, read  # only the 4 never stored (the damaged run is one of them)
    assert len(again[0]) == 11 and again[2] == _rows(root, tmp_path / "full.sqlite")[2]
