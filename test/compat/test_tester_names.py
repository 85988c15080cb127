"""The original Tester's names on ``exp_manager``, its module-level loaders, polixir's checkpoint_name,
``rla migrate --convert-legacy-state`` (the command the loader's error prints), the fork of polixir's
checkpoints and the old scripts' config.py DATA_ROOT."""
from __future__ import annotations

import datetime as dt
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from _legacy_tree import TASK, V1_NAME, write_run

from RLA.errors import RLAError
from RLA.loader import ExperimentLoader

POLIXIR = "2022/11/24/10-00-00-000003"


def test_log_file_finder_on_the_original_tree(legacy_db: Path):
    from RLA.easy_log.tester import Tester
    directory, found = Tester.log_file_finder("2022/03/01/21-13-05-000001", "demo_task", str(legacy_db / "log"))
    assert directory == str(legacy_db / "log" / "demo_task" / "2022/03/01")
    assert found == "21-13-05-000001 11.0.91.89 &env_id=Test-v1&learning_rate=0.0001"
    _, pkl = Tester.log_file_finder("2022/03/01/21-13-05-000001", "demo_task", str(legacy_db / "archive_tester"),
                                    log_type="files")
    assert pkl.endswith(".pkl")
    assert Tester.log_file_finder("2022/03/01/23-00-00-000000", "demo_task", str(legacy_db / "log"))[1] == ""
    with pytest.raises(RLAError, match="log_type"):
        Tester.log_file_finder("2022/03/01/21-13-05-000001", log_type="pkl")


def test_name_helpers(global_run):
    assert global_run.get_version_num() == "v1"
    assert global_run.task_gen(["a", "b"]) == "a-b"
    assert global_run.record_date_to_str(dt.datetime(2022, 3, 1, 1, 2, 3, 4)) == "01-02-03-000004"
    assert global_run.auto_parse_info() == "learning_rate=0.01" and global_run.info == "&learning_rate=0.01"
    name = global_run.log_name_formatter(global_run.log_dir.rstrip("/").rsplit("/", 4)[0], global_run.record_date)
    assert name == global_run.log_dir.rstrip("/")  # the current run's real folder
    other = global_run.log_name_formatter("p", dt.datetime(2022, 3, 1, 1, 2, 3, 4))
    assert other == f"p/2022/03/01/01-02-03-000004_{global_run.ipaddr}_&learning_rate=0.01"


def test_update_fph(global_run):
    assert global_run.update_fph(0) is None  # the first call starts the clock
    assert global_run.update_fph(10) > 0
    assert "fph" in Path(global_run.log_dir, "progress.csv").read_text().splitlines()[0]


def test_manager_names_of_polixir(global_run, tmp_path: Path):
    assert global_run.time_step_holder.get_time() == 0
    global_run.set_timestep(12)
    assert global_run.get_timestep() == 12 == global_run.get_timstep()
    assert Path(global_run.tmp_data_dir).is_dir() and "/tmp_data/demo_task/" in global_run.tmp_data_dir
    assert Path(global_run.hyparameter_dir).is_dir() and "/hyperparameter/demo_task/" in global_run.hyparameter_dir
    past = global_run.load_tester(global_run.layout.record_date, "demo_task", global_run.data_root)
    assert past.hyper_param["learning_rate"] == 0.01
    with pytest.raises(RLAError, match="is not under"):
        global_run.update_log_files_location(str(tmp_path / "elsewhere"))


def test_checkpoint_name_keywords(global_run):
    global_run.new_saver(max_to_keep=1, verbose=False)
    global_run.set_timestep(5)
    global_run.save_checkpoint({"w": torch.ones(1)})
    global_run.save_checkpoint({"w": torch.full((1,), 2.0)}, checkpoint_name="best")
    global_run.set_timestep(6)
    global_run.save_checkpoint({"w": torch.full((1,), 3.0)})
    names = sorted(p.name for p in Path(global_run.checkpoint_dir).iterdir())
    assert names == ["checkpoint-6.pt", "checkpoint-best.pt"]  # rotation keeps the named one
    assert float(global_run.load_checkpoint(checkpoint_name="best")[1]["w"][0]) == 2.0
    assert global_run.load_checkpoint()[0] == 6


def test_log_file_copy_and_module_level_loaders(global_run, legacy_db: Path):
    from RLA.easy_log import tester as tester_module
    global_run.data_root = legacy_db  # the original's helpers read the manager's data root
    args = tester_module.import_hyper_parameters("demo_task", POLIXIR)
    assert args.learning_rate == 0.01
    step, models = tester_module.load_from_record_date("demo_task", POLIXIR)
    assert step == 100 and float(models["policy"]["w"][0]) == 100.0 and global_run.get_timestep() == 100


def test_log_file_copy_keeps_current_hyper_parameters(global_run, tmp_path: Path):
    paths = write_run(Path(global_run.data_root), V1_NAME, {"learning_rate": 0.5, "extra": 1}, [0, 5, 10],
                      checkpoints=[("checkpoint_", 5)], task="demo_task")
    past = global_run.load_tester("2022/03/01/21-13-03-230208", "demo_task", global_run.data_root)
    global_run.log_file_copy(past)
    assert global_run.hyper_param["learning_rate"] == 0.01  # current value kept
    rows = Path(global_run.log_dir, "progress.csv").read_text().splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == ["0", "5"]  # cut at the newest checkpoint
    assert (Path(global_run.checkpoint_dir) / "checkpoint-5.pt").is_file()
    assert paths["checkpoint"].joinpath("checkpoint_5.pt").is_file()  # the source is untouched


def test_fork_links_polixirs_checkpoints_and_loads_them(global_run):
    write_run(Path(global_run.data_root), V1_NAME, {"learning_rate": 0.5}, [0, 50, 100],
              checkpoints=[("checkpoint_", 50), ("checkpoint_", 100), ("best_", 60), ("best_", 120)],
              task="demo_task")
    loader = ExperimentLoader().config("demo_task", "2022/03/01/21-13-03-230208", global_run.data_root)
    assert loader.fork_log_files() == 100
    names = sorted(p.name for p in Path(global_run.checkpoint_dir).iterdir())
    assert names == ["best_60.pt", "checkpoint-100.pt", "checkpoint-50.pt"]  # best_120 is after the fork point
    step, models = global_run.load_checkpoint()
    assert step == 100 and float(models["policy"]["w"][0]) == 100.0


def _printed_command(root: Path, record: str) -> list:
    with pytest.raises(RLAError) as info:
        ExperimentLoader().config(TASK, record, root).import_hyper_parameters()
    command = re.search(r"`(rla migrate --convert-legacy-state[^`]*)`", str(info.value)).group(1)
    return shlex.split(command)


@pytest.mark.timeout(120)
def test_the_command_the_error_prints_converts_the_pickle(tmp_path: Path, subprocess_env: dict):
    paths = write_run(tmp_path, V1_NAME, {"lr": 0.25}, [0, 3], backup=False, password="hunter2-secret")
    argv = _printed_command(tmp_path, "2022/03/01/21-13-03-230208")
    assert argv[:3] == ["rla", "migrate", "--convert-legacy-state"]
    done = subprocess.run([sys.executable, "-m", "rla_scripts.cli", *argv[1:]], capture_output=True, text=True,
                          env=subprocess_env, timeout=100)
    assert done.returncode == 0, done.stderr
    assert "converted" in done.stdout
    assert "hunter2-secret" not in paths["archive_tester"].with_suffix(".json").read_text()
    args = ExperimentLoader().config(TASK, "2022/03/01/21-13-03-230208", tmp_path).import_hyper_parameters()
    assert args.lr == 0.25  # no trust_pickles needed any more
    again = subprocess.run([sys.executable, "-m", "rla_scripts.cli", *argv[1:]], capture_output=True, text=True,
                           env=subprocess_env, timeout=100)
    assert again.returncode == 0 and "kept" in again.stdout


@pytest.mark.timeout(120)
def test_convert_refuses_a_code_running_pickle(tmp_path: Path):
    import os
    import pickle

    from rla_scripts.cli import main
    paths = write_run(tmp_path, V1_NAME, {"lr": 1}, [0, 1], backup=False)

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "pwned"),))
    paths["archive_tester"].write_bytes(pickle.dumps({"hyper_param": Evil()}))
    assert main(["migrate", "--convert-legacy-state", "--data-root", str(tmp_path), "--task", TASK,
                 "--regex", "*"]) == 1
    assert not (tmp_path / "pwned").exists() and not paths["archive_tester"].with_suffix(".json").exists()


@pytest.mark.parametrize("script, extra", [("view_expt", []), ("delete_expt", ["--yes"]),
                                           ("archive_expt", ["--yes"])])
def test_old_scripts_read_config_py_data_root(legacy_db: Path, tmp_path: Path, monkeypatch, script: str,
                                              extra: list):
    import importlib
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "config.py").write_text(f"DATA_ROOT = {str(legacy_db)!r}\n")
    monkeypatch.chdir(scripts)
    monkeypatch.delenv("RLA_DATA_ROOT", raising=False)
    main = importlib.import_module(f"rla_scripts.{script}").main
    assert main(["--task_table_name", "demo_task", "--regex", "2022/11/24/*", *extra]) == 0
    if script == "delete_expt":
        assert not list((legacy_db / "log" / "demo_task").glob("2022/11/24/*"))
    if script == "archive_expt":
        assert list((legacy_db / "arc").rglob("10-00-00-000003*"))
