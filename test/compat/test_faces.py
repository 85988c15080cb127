"""Every module path of the original imports, and its most used functions work as documented."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

MODULES = ["RLA.easy_log.log_tools", "RLA.easy_log.const", "RLA.easy_log.time_used_recorder", "RLA.utils.utils",
           "RLA.rla_argparser", "RLA.const", "RLA.query_tool", "RLA.exp_loader", "RLA.exp_loader.utils",
           "RLA.trackers.time_used_recorder", "RLA.trackers.memory_used_recorder", "RLA.easy_plot.plot_func_v2",
           "RLA.easy_plot.plot_util", "RLA.easy_plot.result_cls"]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str):
    importlib.import_module(name)


def test_polixir_top_level_names():
    from RLA import (DEFAULT_X_NAME, LOG, experiment_data_query, fork_log_file_fn,  # noqa: F401
                     single_experiment_query, time_tracker, update_hyper_parameters_fn)
    assert LOG == "log" and DEFAULT_X_NAME == "time-step"


def test_load_yaml_reads_the_template(tmp_path: Path):
    from RLA.utils.utils import load_yaml
    (tmp_path / "c.yaml").write_text("DL_FRAMEWORK: 'torch'\nREMOTE_SETTING:\n  port: ''\n")
    assert load_yaml(str(tmp_path / "c.yaml")) == {"DL_FRAMEWORK": "torch", "REMOTE_SETTING": {"port": ""}}


def test_query_tool_on_the_original_tree(legacy_db: Path):
    from RLA.easy_log.const import ARCHIVE_TESTER, CHECKPOINT, LOG
    from RLA.query_tool import experiment_data_query, single_experiment_query
    logs = experiment_data_query(str(legacy_db), "demo_task", "2022/03/01/*", LOG)
    assert sorted(logs) == ["2022/03/01/21-13-03-230208", "2022/03/01/21-13-05-000001", "2022/03/01/21-20-00-000002"]
    tester = single_experiment_query(str(legacy_db), "demo_task", "2022/03/01/21-13-05-000001", ARCHIVE_TESTER)
    assert tester.exp_manager.hyper_param["env_id"] == "Test-v1"  # from parameter.json: no unpickling
    ckps = single_experiment_query(str(legacy_db), "demo_task", "2022/11/24/10-00-00-000003", CHECKPOINT)
    assert sorted(ckps.all_ckps) == ["best_60.pt", "checkpoint_100.pt", "checkpoint_50.pt"]


def test_plot_func_v2_returns_the_originals_pair(legacy_db: Path, tmp_path: Path):
    from RLA.easy_plot.plot_func_v2 import plot_func
    g2lf, score_results = plot_func(data_root=str(legacy_db), task_table_name="demo_task", regs=["2022/03/01/21-13*"],
                                    split_keys=["learning_rate"], metrics=["y_out"], use_marker=True, legend_ncol=2,
                                    legend_outside=True, x_bound=25, summarize_res=True, resample=0,
                                    smooth_step=0, save_dir=tmp_path, save_name="p.png")
    assert set(g2lf) == {"y_out"}
    assert score_results["learning_rate=0.001-range"] == [40.0, 40.0]  # y_out = 2 * step; step 30 cut by x_bound
    assert (tmp_path / "p.png").is_file()


def test_time_tracker_names(capsys):
    from RLA import time_tracker
    from RLA.easy_log import logger
    with time_tracker("rollout"):
        pass
    with logger.open_time_tracker("rollout"):
        pass
    assert time_tracker.get_info()["total calls/rollout"] == 2
    logger.set_time(7)
    assert logger.get_time() == 7 and logger.timestep() == 7


def test_migrate_script_uses_config_py_data_root(legacy_db: Path, tmp_path: Path, monkeypatch):
    from rla_scripts.migrate_expt import main
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "config.py").write_text(f"DATA_ROOT = {str(legacy_db)!r}\n")
    monkeypatch.chdir(scripts)
    assert main(["--task_table", "demo_task", "--target_task_table", "t2", "--regex", "2022/11/24/*", "--yes"]) == 0
    assert (legacy_db / "log" / "t2" / "2022/11/24").is_dir()


def test_pretty_plotter_script(legacy_db: Path):
    from rla_scripts.start_pretty_plotter import main
    assert main(["--task_table_name", "demo_task", "--regex", "2022/11/24/*", "--data_root", str(legacy_db),
                 "--no-start_server"]) == 0
    found = list((legacy_db / "log" / "demo_task" / "2022/11/24").glob("*/parameter.json"))
    assert json.loads(found[0].read_text())["learning_rate"] == 0.01
