"""RLA.easy_log.log_tools used as the original's test_scripts.py and scripts use it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from RLA.easy_log.log_tools import (ArchiveLogTool, DeleteLogTool, Filter, MigrateLogTool, PrettyPlotterTool,
                                    ViewLogTool)

TASK = "demo_task"


def _filter(kind: str = Filter.ALL, bound: float = 0) -> Filter:
    f = Filter()
    f.config(type=kind, timstep_bound=bound)
    return f


@pytest.mark.timeout(60)
def test_delete_counts_runs_times_types_then_nothing(legacy_db: Path):
    tool = DeleteLogTool(proj_root=str(legacy_db), task_table_name=TASK, regex="2022/03/01/21-13*", filter=_filter())
    assert tool.delete_related_log(skip_ask=True) == 10  # 2 runs x 5 data types, as the original's test
    assert not list((legacy_db / "log" / TASK / "2022/03/01").glob("21-13*"))
    assert any((legacy_db / ".trash").rglob("progress.csv"))  # RLA's fix: a trash first
    assert tool.delete_related_log(skip_ask=True) == 0


@pytest.mark.timeout(60)
def test_delete_small_timestep_uses_the_bound(legacy_db: Path):
    assert DeleteLogTool(str(legacy_db), TASK, "2022/03/01/*", _filter(Filter.SMALL_TIMESTEP, 0)) \
        .delete_small_timestep_log(skip_ask=True) == 0
    # only the bare run (largest step 1) is at or below 5
    assert DeleteLogTool(str(legacy_db), TASK, "2022/03/01/*", _filter(Filter.SMALL_TIMESTEP, 5)) \
        .delete_small_timestep_log(skip_ask=True) == 5
    assert len(list((legacy_db / "log" / TASK / "2022/03/01").iterdir())) == 2


@pytest.mark.timeout(60)
def test_delete_refuses_answer_no(legacy_db: Path, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda *_: "n")
    assert DeleteLogTool(str(legacy_db), TASK, "2022/03/01/*", _filter()).delete_related_log() == 0
    assert len(list((legacy_db / "log" / TASK / "2022/03/01").iterdir())) == 3


@pytest.mark.timeout(60)
def test_archive_copies_then_delete_finds_them_in_arc(legacy_db: Path):
    ArchiveLogTool(proj_root=str(legacy_db), task_table_name=TASK, regex="2022/03/01/21-13*").archive_log(skip_ask=True)
    assert len(list((legacy_db / "log" / TASK / "2022/03/01").glob("21-13*"))) == 2  # copies: sources stay
    assert len(list((legacy_db / "arc" / "log" / TASK / "2022/03/01").glob("21-13*"))) == 2
    assert (legacy_db / "arc" / "archive_tester" / TASK / "2022/03/01").is_dir()


@pytest.mark.timeout(60)
def test_migrate_copies_to_the_target_table(legacy_db: Path):
    n = MigrateLogTool(str(legacy_db), TASK, "2022/03/01/21-13*", target_task_table_name="new_task").migrate_log(
        skip_ask=True)
    assert n == 2
    assert len(list((legacy_db / "log" / "new_task" / "2022/03/01").iterdir())) == 2
    assert DeleteLogTool(str(legacy_db), "new_task", "2022/03/01/21-13*", _filter()).delete_related_log(
        skip_ask=True) == 10


@pytest.mark.timeout(60)
def test_view_prints_backup_of_runs_that_logged(legacy_db: Path, capsys):
    shown = ViewLogTool(str(legacy_db), TASK, "2022/03/01/*").view_log(skip_ask=True)
    assert sorted(shown) == ["2022/03/01/21-13-03-230208", "2022/03/01/21-13-05-000001", "2022/03/01/21-20-00-000002"]
    assert "key: learning_rate, value: 0.0001" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_pretty_plotter_writes_parameter_json_without_unpickling(legacy_db: Path, monkeypatch):
    import pickle
    monkeypatch.setattr(pickle, "load", lambda *_: pytest.fail("unpickled"))
    written = PrettyPlotterTool(str(legacy_db), TASK, "2022/03/01/21-13*").gen_json("2022/03/01/21-13*")
    assert len(written) == 2
    data = json.loads((legacy_db / "log" / TASK / "2022/03/01" /
                       "21-13-05-000001 11.0.91.89 &env_id=Test-v1&learning_rate=0.0001" / "parameter.json").read_text())
    assert data["env_id"] == "Test-v1" and data["formatted_log_name"].endswith("&learning_rate=0.0001")


def test_filter_rejects_other_types(legacy_db: Path):
    with pytest.raises(TypeError):
        DeleteLogTool(str(legacy_db), TASK, "*", filter="all")
