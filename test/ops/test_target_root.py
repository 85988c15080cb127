"""A migration's target data root may not lie inside the source data root, nor contain it.

``rla migrate --to-data-root data/log`` copied every run into ``data/log/{log,code,...}``,
where the source root's listing then found them as fragment runs of tasks ``log/demo``,
``code/demo``...: one data type's folder holding the others (item 4 of issue #15). A data root
that is a link (the user's own choice) still works, and so do API calls with ``Path`` objects.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from RLA.errors import RLAError
from RLA.ops import plan_archive, plan_migrate, testing
from rla_scripts.cli import main


@pytest.fixture
def db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    testing.make_database(root, runs=2, files=1, size=16)
    return root


def _tree(folder: Path) -> list:
    """Every path below ``folder`` but the lock and the query index (the selection's cache)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.name != "lock" and not p.name.startswith(".rla_index.sqlite"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("where", ["log", "log/demo", "arc", "sub/folder", ".."])
def test_a_target_root_nested_with_the_source_is_refused(where, db, capsys):
    target = db / where
    target.mkdir(parents=True, exist_ok=True)
    before = _tree(db.parent)
    assert main(["migrate", "--task", "demo", "--to-data-root", str(target), "--yes", "--data-root", str(db)]) == 1
    err = capsys.readouterr().err
    assert "rla migrate: error:" in err and "inside" in err, err
    assert _tree(db.parent) == before
    with pytest.raises(RLAError, match="inside"):
        plan_migrate(db, testing._runs(db), to_data_root=target)


@pytest.mark.timeout(60)
def test_a_target_root_reached_through_a_link_into_the_source_is_refused(db, tmp_path):
    os.symlink(db / "log", tmp_path / "sneaky")
    with pytest.raises(RLAError, match="inside"):
        plan_migrate(db, testing._runs(db), to_data_root=tmp_path / "sneaky")


@pytest.mark.timeout(60)
def test_a_sibling_target_root_and_a_linked_data_root_work(db, tmp_path):
    os.symlink(db, tmp_path / "linked")
    other = tmp_path / "data2"
    other.mkdir()
    runs = testing._runs(tmp_path / "linked")
    done = plan_migrate(Path(tmp_path / "linked"), runs, to_data_root=Path(other), move=True).apply()
    assert [r.result for r in done] == ["done", "done"]
    moved = testing._runs(other)
    assert len(moved) == 2 and not testing._runs(db)
    assert [r.result for r in plan_archive(other, moved).apply()] == ["done", "done"]
