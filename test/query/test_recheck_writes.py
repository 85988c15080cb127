"""The periodic re-check of settled runs writes only narrow rows, and an older index is rebuilt.

A settled run's files are ``stat``\\ ed again when its last check is due (``recheck_s``); a
check that finds nothing changed must only move the run's ``checks`` row, never rewrite its
large ``runs`` row (at 100,000 runs that rewrite made the first query of each hour 13 s).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Dict, List

import pytest

from RLA.layout import DATA_TYPES, INDEX_DB
from RLA.query import Catalog, list_runs
from RLA.query.index_file import SCHEMA_VERSION
from RLA.query.testing import age_tree, write_progress
from RLA.query.warm import RECHECK_S, SPREAD, WARM, stamp

_COUNT_WRITES = """
CREATE TEMP TABLE runs_writes (n INTEGER NOT NULL);
INSERT INTO runs_writes VALUES (0);
CREATE TEMP TRIGGER runs_ins AFTER INSERT ON main.runs BEGIN UPDATE runs_writes SET n = n + 1; END;
CREATE TEMP TRIGGER runs_upd AFTER UPDATE ON main.runs BEGIN UPDATE runs_writes SET n = n + 1; END;
CREATE TEMP TRIGGER runs_del AFTER DELETE ON main.runs BEGIN UPDATE runs_writes SET n = n + 1; END;
"""


@pytest.fixture(autouse=True)
def forget_warm_state():
    WARM.reset()
    yield
    WARM.reset()


def _checked(catalog: Catalog) -> Dict[str, float]:
    return dict(catalog.conn.execute("SELECT key, checked_at FROM checks WHERE settled = 1"))


def _make_due(catalog: Catalog, where: str, args: tuple) -> None:
    """Move check times back by more than the period, as if an hour had passed for those runs
    (and forget the bound on check times, as a hand edit must)."""
    catalog.conn.execute(
        f"UPDATE checks SET checked_at = checked_at - ? WHERE {where}", (RECHECK_S + 1, *args)
    )
    catalog.conn.execute("DELETE FROM meta WHERE key = 'due_from'")


def _bound(catalog: Catalog) -> int:
    return int(catalog.conn.execute("SELECT value FROM meta WHERE key = 'due_from'").fetchone()[0])


def _writes(catalog: Catalog) -> int:
    return int(catalog.conn.execute("SELECT n FROM runs_writes").fetchone()[0])


@pytest.mark.timeout(60)
def test_a_due_recheck_that_finds_nothing_changed_rewrites_no_runs_row(db: Path) -> None:
    age_tree(db)
    assert len(list_runs(db)) == 11  # the index built, every run settled
    with Catalog(db, recheck_s=0.0) as catalog:  # every settled run is due on every query
        catalog.conn.executescript(_COUNT_WRITES)
        rows_before = catalog.conn.execute("SELECT * FROM runs ORDER BY key").fetchall()
        checked_before = _checked(catalog)
        assert len(checked_before) == 11
        catalog.refresh(archived=None)
        checked_after = _checked(catalog)
        # The re-check happened (every run's check time moved) ...
        assert checked_after.keys() == checked_before.keys()
        assert all(checked_after[key] > checked_before[key] for key in checked_before)
        # ... and found nothing changed: not one runs row written, the rows as they were.
        assert _writes(catalog) == 0
        assert catalog.conn.execute("SELECT * FROM runs ORDER BY key").fetchall() == rows_before
        # A run whose files did change is read again: its row (only its row) is rewritten.
        where = "env == 'Hopper' and algo == 'sac' and seed == 0"
        key = next(
            iter(
                catalog.conn.execute(
                    "SELECT key FROM runs WHERE json_extract(pjson, '$.seed') = 0 "
                    "AND json_extract(pjson, '$.env') = 'Hopper' "
                    "AND json_extract(pjson, '$.algo') = 'sac'"
                )
            )
        )[0]
        path = db / "log" / key / "progress.csv"
        write_progress(path, {"return": [1.0, 2.0, 4242.0]})
        catalog.refresh(archived=None)
        assert _writes(catalog) == 1  # INSERT OR REPLACE of that one row
    assert list_runs(db, where=where)["last(return)"].iloc[0] == 4242.0


@pytest.mark.timeout(60)
def test_a_recheck_stamps_only_the_runs_it_looked_at(db: Path) -> None:
    """Runs not due keep their check time (else a hand edit could wait more than the period)."""
    age_tree(db)
    list_runs(db)
    with Catalog(db) as catalog:
        keys = sorted(_checked(catalog))
        due = keys[0]
        _make_due(catalog, "key = ?", (due,))
        before = _checked(catalog)
        started = time.time()
        catalog.refresh(archived=None)
        after = _checked(catalog)
    assert after[due] >= started - SPREAD * RECHECK_S  # the due run was checked, its time moved
    assert {key: after[key] for key in keys[1:]} == {key: before[key] for key in keys[1:]}


@pytest.mark.timeout(60)
def test_runs_due_in_another_scope_are_checked_by_its_next_query(db: Path) -> None:
    """A query of one task checks only its runs; the bound it leaves (meta 'due_from', which
    lets a query skip the scan for due runs) still finds the other task's due runs."""
    age_tree(db)
    list_runs(db)
    with Catalog(db) as catalog:
        _make_due(catalog, "1", ())
        before = _checked(catalog)
        catalog.refresh(task="mujoco")
        middle = _checked(catalog)
        others = [key for key in before if key.startswith("other/")]
        assert others and all(middle[key] == before[key] for key in others)  # not in scope: untouched
        assert all(middle[key] > before[key] for key in before if key.startswith("mujoco/"))
    with Catalog(db) as catalog:  # a new process, the other task
        catalog.refresh(task="other")
        after = _checked(catalog)
    assert all(after[key] > before[key] for key in others)


@pytest.mark.timeout(60)
def test_a_run_stored_with_an_old_check_time_is_due_at_once(db: Path) -> None:
    """A writer that stores a run checked long ago (a stale clock, a longer period) lowers the
    bound, so the next query checks that run instead of skipping the scan for due runs."""
    from RLA.query.records import read_record, signature_and_mtime
    from RLA.query.stored import encode, put_runs
    from RLA.query.tree import layout_of

    age_tree(db)
    list_runs(db)
    with Catalog(db) as catalog:
        _make_due(catalog, "1", ())
        catalog.refresh(archived=None)  # a re-check: the bound on check times is set again
        assert _bound(catalog) == int(min(_checked(catalog).values())) - 1
        key = min(_checked(catalog))
        layout = layout_of(db, key)
        sig = signature_and_mtime(layout)[0]
        row = encode(
            layout, read_record(layout, sig, full_info=False), sig, True, time.time() - 2 * RECHECK_S
        )
        catalog.file.begin()
        put_runs(catalog.conn, [row])
        catalog.file.commit(True)
        assert _checked(catalog)[key] < time.time() - RECHECK_S
        started = time.time()
        catalog.refresh(archived=None)
        assert _checked(catalog)[key] >= started - SPREAD * RECHECK_S  # checked by this query


@pytest.mark.timeout(60)
def test_an_index_of_the_previous_layout_is_rebuilt_not_trusted(db: Path) -> None:
    """A file of schema 6 (``settled``/``checked_at`` in ``runs``, no ``checks``) that holds a
    record no run has is dropped on open, never read."""
    age_tree(db)
    list_runs(db)
    with sqlite3.connect(db / INDEX_DB) as conn:
        conn.executescript(
            f"""
            DROP TRIGGER runs_gone;
            DROP TABLE checks;
            ALTER TABLE runs ADD COLUMN settled INTEGER NOT NULL DEFAULT 1;
            ALTER TABLE runs ADD COLUMN checked_at REAL NOT NULL DEFAULT {time.time()};
            CREATE INDEX runs_live ON runs(settled, checked_at, key, sig, status, archived, task);
            UPDATE meta SET value = '6' WHERE key = 'schema';
            UPDATE runs SET record = json_set(record, '$.params.seed', 99), pjson = json_set(pjson, '$.seed', 99)
                WHERE key = (SELECT min(key) FROM runs WHERE json_extract(pjson, '$.seed') = 0);
            """
        )
    with Catalog(db) as catalog:
        assert [pair for pair in catalog.records() if pair[1].params.get("seed") == 99] == []
        assert catalog.rebuilt_reason and "schema version 6" in catalog.rebuilt_reason
        assert catalog.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
            SCHEMA_VERSION,
        )
        assert catalog.conn.execute("SELECT count(*) FROM checks").fetchone()[0] == 11
    assert len(list_runs(db, where="seed == 99")) == 0


@pytest.mark.timeout(60)
def test_a_deleted_run_leaves_no_checks_row(db: Path) -> None:
    import shutil

    age_tree(db)
    list_runs(db)
    with Catalog(db) as catalog:
        key = catalog.conn.execute("SELECT max(key) FROM runs WHERE task = 'mujoco'").fetchone()[0]
    for data_type in DATA_TYPES:
        shutil.rmtree(db / data_type / key, ignore_errors=True)
    assert len(list_runs(db)) == 10
    with Catalog(db) as catalog:
        assert catalog.conn.execute("SELECT count(*) FROM checks").fetchone()[0] == 10
        assert catalog.conn.execute("SELECT count(*) FROM checks WHERE key = ?", (key,)).fetchone()[0] == 0


def test_check_times_are_spread_but_never_later_than_the_check() -> None:
    """Runs checked together come due over a quarter of the period, none later than promised."""
    now = 1_800_000_000.0
    keys: List[str] = [
        f"task/2026/11/{day:02d}/09-00-{i:02d}-000000" for day in range(1, 29) for i in range(40)
    ]
    stamps = [stamp(key, now, RECHECK_S) for key in keys]
    assert all(now - SPREAD * RECHECK_S <= when <= now for when in stamps)
    assert max(stamps) - min(stamps) > 0.9 * SPREAD * RECHECK_S  # not all due in the same second
    assert len({round(when) for when in stamps}) > len(keys) // 2
    assert [stamp(key, now, RECHECK_S) for key in keys] == stamps  # deterministic per run
    assert stamp(keys[0], now, 0.0) == now  # recheck_s=0: checked on every query, as promised
