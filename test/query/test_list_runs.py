"""list_runs / select_runs: columns, filters, legacy and synced runs, broken runs, errors."""
from __future__ import annotations

import pandas as pd

import json
import warnings

import pytest

from RLA.errors import QueryError, RunNotFoundError
from RLA.query import BrokenRunWarning, list_runs, load_curves, select_runs
from RLA.query.testing import make_run


@pytest.mark.timeout(60)
def test_lists_every_run_with_typed_params_and_metric_summaries(db):
    frame = list_runs(db)
    assert len(frame) == 11
    hopper = frame[(frame["env"] == "Hopper") & (frame["algo"] == "sac") & (frame["seed"] == 1)].iloc[0]
    assert hopper["lr"] == pytest.approx(2e-3)
    assert hopper["net.hidden"] == 64
    assert hopper["last(return)"] == 10.0 and hopper["max(return)"] == 20.0 and hopper["min(return)"] == 0.0
    assert hopper["status"] == "finished" and hopper["time_step"] == 200
    assert str(frame["seed"].dtype).startswith("int") or frame["seed"].dtype == float


@pytest.mark.timeout(60)
def test_runs_of_the_original_project_and_synced_runs_are_listed(db):
    frame = list_runs(db).set_index("index")
    legacy = frame.loc["mujoco/2022/03/01/21-13-03-230208"]
    assert legacy["param_source"] == "parameter.json" and legacy["lr"] == 0.01 and legacy["status"] == "unknown"
    assert " " in legacy["name"]  # the legacy space-separated name
    synced = frame.loc["mujoco/2022/03/02/00-00-00-000000"]
    assert synced["param_source"] == "run.json" and synced["last(return)"] == 3.0
    backup = frame.loc["other/2022/03/03/00-00-00-000000"]
    assert backup["param_source"] == "backup.txt" and backup["seed"] == 2


@pytest.mark.timeout(60)
def test_where_combines_params_and_metrics(db):
    frame = list_runs(db, where="algo in ['sac', 'ppo'] and lr >= 1e-3 and last('return') > 2")
    assert sorted(frame["index"]) == sorted(list_runs(db, task="mujoco", where="algo == 'sac'")["index"].tolist() +
                                            ["mujoco/2022/03/02/00-00-00-000000"])


@pytest.mark.timeout(60)
def test_task_regex_since_until_status_filters(db):
    assert len(list_runs(db, task="other")) == 1
    assert len(list_runs(db, task="mujoco", regex="2026/11/0[12]/*")) == 2
    assert len(list_runs(db, regex=["*env=Walker*", "*seed=0*"])) == 7  # 4 Walker + 2 Hopper + legacy Ant
    assert len(list_runs(db, since="2026/11/03", until="2026/11/04")) == 2
    assert len(list_runs(db, since="2026-11-08")) == 1
    assert len(list_runs(db, status="unknown")) == 2
    assert len(list_runs(db, status=["finished"])) == 9


@pytest.mark.timeout(60)
def test_a_full_index_selects_one_run(db):
    frame = list_runs(db, regex="mujoco/2022/03/01/21-13-03-230208")
    assert frame["index"].tolist() == ["mujoco/2022/03/01/21-13-03-230208"]


@pytest.mark.timeout(60)
def test_unknown_task_is_an_error_with_a_hint(db):
    with pytest.raises(RunNotFoundError, match="Unknown task 'mujoc'.*did you mean 'mujoco'"):
        list_runs(db, task="mujoc")


@pytest.mark.timeout(60)
def test_unknown_name_and_metric_are_errors(db):
    with pytest.raises(QueryError, match="(?s)Unknown name 'seeds'.*did you mean 'seed'"):
        list_runs(db, where="seeds > 1")
    with pytest.raises(QueryError, match="No run in the selection has the metric 'reward'"):
        list_runs(db, where="last('reward') > 1")


@pytest.mark.timeout(60)
def test_bad_date_and_status_are_errors(db):
    with pytest.raises(QueryError, match="Cannot read the date 'yesterday'"):
        list_runs(db, since="yesterday")
    with pytest.raises(QueryError, match="Unknown status 'done'"):
        list_runs(db, status="done")


@pytest.mark.timeout(60)
def test_corrupt_run_json_and_progress_are_reported_and_skipped(db):
    runs = select_runs(db, task="mujoco", where="env == 'Hopper'").runs
    (runs[0].layout.log_dir / "run.json").write_text("{not json", encoding="utf-8")
    (runs[1].layout.log_dir / "progress.csv").write_bytes(b"a,b\n1,2\n\xff\xfe,\x00\"\n\"unterminated")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = list_runs(db)
    assert len(frame) == 9
    skipped = dict(frame.attrs["skipped"])
    assert "corrupt run.json" in skipped[runs[0].index]
    assert "corrupt progress.csv" in skipped[runs[1].index]
    assert sum(issubclass(w.category, BrokenRunWarning) for w in caught) == 2
    assert len(list_runs(db, include_broken=True)) == 11


@pytest.mark.timeout(60)
def test_running_run_with_dead_process_is_reported_crashed(tmp_path):
    layout = make_run(tmp_path, params={"a": 1}, status="running")
    info_path = layout.log_dir / "run.json"
    info = json.loads(info_path.read_text())
    assert list_runs(tmp_path)["status"].tolist() == ["running"]
    info["pid"] = 2 ** 22 + 12345  # no such process on this host
    info_path.write_text(json.dumps(info))
    assert list_runs(tmp_path)["status"].tolist() == ["crashed"]


@pytest.mark.timeout(60)
def test_load_curves_returns_a_long_frame(db):
    frame = list_runs(db, where="env == 'Hopper' and algo == 'sac'")
    curves = load_curves(frame, ["return"])
    assert list(curves.columns) == ["index", "metric", "time-step", "value"]
    assert len(curves) == 6
    first = curves[curves["index"] == frame["index"].iloc[0]]
    assert first["time-step"].tolist() == [0, 100, 200] and first["value"].tolist() == [0.0, 10.0, 5.0]


@pytest.mark.timeout(60)
def test_load_curves_of_a_metric_no_run_has_is_an_error(db):
    frame = list_runs(db, task="mujoco")
    with pytest.raises(QueryError, match="(?s)No selected run logged 'retrun'.*did you mean 'return'"):
        load_curves(frame, ["retrun"])


@pytest.mark.timeout(60)
def test_load_curves_of_nothing_is_an_error():
    with pytest.raises(RunNotFoundError, match="No runs to load curves from"):
        load_curves([], ["return"])


def test_parent_of_a_resumed_run_is_a_column(tmp_path):
    from RLA.manager.experiment import ExperimentManager
    from RLA.query import list_runs

    (tmp_path / "rla_config.yaml").write_text("LOG_USED: [csv]\nDL_FRAMEWORK: none\n")
    mgr = ExperimentManager()
    indexes = []
    for _ in range(2):
        mgr.configure("t", rla_config=str(tmp_path / "rla_config.yaml"), data_root=str(tmp_path / "db"), run_file=[])
        mgr.log_files_gen()
        if indexes:
            mgr.set_parent(indexes[0])
        indexes.append(mgr.index)
    mgr.finish()
    frame = list_runs(tmp_path / "db").set_index("index")
    assert frame.loc[indexes[1], "parent"] == indexes[0]
    assert pd.isna(frame.loc[indexes[0], "parent"])
