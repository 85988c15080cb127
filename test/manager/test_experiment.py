"""ExperimentManager: run creation, run.json, lifecycle and repeated runs."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from RLA.errors import ConfigError, HyperParameterError, RunStateError
from RLA.layout import iter_run_dirs
from RLA.manager.experiment import ExperimentManager
from RLA.manager.run_info import effective_status, read_run_info


def test_log_files_gen_creates_every_data_type(manager, tmp_path):
    layout = manager.log_files_gen()
    data = tmp_path / "data"
    for kind in ("log", "code", "checkpoint", "results", "replay"):
        assert (data / kind / "demo_task" / layout.date / layout.name).is_dir()
    assert layout.archive_tester_file.is_file()
    assert manager.log_dir.endswith("/") and manager.log_dir.startswith(str(data / "log"))
    assert manager.index == f"demo_task/{layout.record_date}"
    assert "&env_id=Hopper-v4&seed=1" in layout.name


def test_run_json_holds_full_metadata(manager):
    layout = manager.log_files_gen()
    info = read_run_info(layout.run_info_file)
    for key in ("index", "task", "name", "hyper_params", "tracked_keys", "host", "ip", "pid", "command",
                "python", "packages", "git", "start_time", "end_time", "status", "exit_code", "heartbeat",
                "parent"):
        assert key in info
    assert info["hyper_params"] == {"env_id": "Hopper-v4", "lr": 0.001, "seed": 1}
    assert info["tracked_keys"] == ["env_id", "seed"]
    assert info["status"] == "running" and info["pid"] == os.getpid()
    manager.finish()
    info = read_run_info(layout.run_info_file)
    assert info["status"] == "finished" and info["exit_code"] == 0 and info["end_time"]


def test_typed_and_nested_hyper_parameters_are_kept_in_full(minimal_config, tmp_path):
    mgr = ExperimentManager()
    mgr.set_hyper_param(net={"arch": [64, 64], "act": "relu"}, note="x" * 400)
    mgr.add_record_param(["net.arch", "note"])
    mgr.configure("t", rla_config=str(minimal_config), data_root=str(tmp_path / "d"), run_file=[])
    layout = mgr.log_files_gen()
    assert "&net.arch={64, 64}&note=" in layout.name and len(layout.name.encode()) <= 255
    info = read_run_info(layout.run_info_file)
    assert info["hyper_params"]["net"]["arch"] == [64, 64] and len(info["hyper_params"]["note"]) == 400
    mgr.finish()


def test_tracking_a_missing_key_is_an_error(manager):
    with pytest.raises(HyperParameterError, match="'missing'") as info:
        manager.add_record_param(["missing"])
    assert isinstance(info.value, KeyError)
    with pytest.raises(HyperParameterError):
        manager.add_record_param(["env_id.nope"])


def test_second_run_in_one_process_is_clean(manager, minimal_config, tmp_path):
    first = manager.log_files_gen()
    manager.set_hyper_param(env_id="Walker-v4", lr=0.01, seed=2)
    manager.add_record_param(["env_id", "seed"])
    manager.configure("demo_task", rla_config=str(minimal_config), data_root=str(tmp_path / "data"), run_file=[])
    second = manager.log_files_gen()
    assert first.name != second.name
    assert second.name.endswith("&env_id=Walker-v4&seed=2")  # tracked keys did not pile up
    assert read_run_info(first.run_info_file)["status"] == "finished"
    assert read_run_info(second.run_info_file)["status"] == "running"


def test_print_args_writes_backup_and_parameter_json(manager):
    layout = manager.log_files_gen()
    manager.print_args()
    params = json.loads((layout.code_dir / "parameter.json").read_text())
    assert params == {"env_id": "Hopper-v4", "lr": 0.001, "seed": 1}
    manager.finish()
    backup = (layout.log_dir / "backup.txt").read_text()
    assert "key: lr, value: 0.001" in backup and "key: env_id, value: Hopper-v4" in backup


def test_operations_before_the_run_exists_are_clear_errors():
    mgr = ExperimentManager()
    with pytest.raises(RunStateError, match="configure"):
        mgr.log_files_gen()
    with pytest.raises(RunStateError, match="log_files_gen"):
        mgr.print_args()


def test_configure_aliases_of_the_original(minimal_config, tmp_path):
    mgr = ExperimentManager()
    mgr.configure(task_name="old", private_config_path=str(minimal_config), log_root=str(tmp_path / "d"),
                  run_file=[])
    assert mgr.task_table_name == "old" and mgr.data_root == (tmp_path / "d").resolve()


@pytest.mark.parametrize("kwargs, match", [
    ({"task_table_name": None}, "task name"),
    ({"task_table_name": "../escape"}, "Bad task name"),
    ({"data_root": None}, "data root"),
    ({"rla_config": None}, "rla_config"),
])
def test_configure_rejects_bad_arguments(minimal_config, tmp_path, kwargs, match):
    args = {"task_table_name": "t", "rla_config": str(minimal_config), "data_root": str(tmp_path)}
    args.update(kwargs)
    with pytest.raises(ConfigError, match=match):
        ExperimentManager().configure(**args)


def test_custom_data_is_saved_in_the_resume_state(manager):
    layout = manager.log_files_gen()
    manager.add_custom_data("returns", 1.5)
    manager.add_custom_data("returns", 2.5)
    manager.add_custom_data("best", {"step": 3}, mode="replace")
    manager.save_state()
    state = json.loads(layout.archive_tester_file.read_text())
    assert state["custom_data"] == {"returns": [1.5, 2.5], "best": {"step": 3}}
    assert state["hyper_param"]["lr"] == 0.001 and state["index"] == layout.index


def test_stale_heartbeat_of_a_running_run_reads_as_crashed(manager):
    layout = manager.log_files_gen()
    info = read_run_info(layout.run_info_file)
    info["heartbeat"] = "2020-01-01T00:00:00.000000+00:00"
    info["host"] = "another-host"
    assert effective_status(info) == "crashed"
    info["heartbeat"] = info["start_time"] = __import__("RLA.manager.run_info", fromlist=["x"]).now_iso()
    assert effective_status(info) == "running"


CHILD = textwrap.dedent("""
    import sys, time
    from RLA.manager.experiment import ExperimentManager
    mgr = ExperimentManager()
    mgr.set_hyper_param(i=int(sys.argv[3]))
    mgr.add_record_param(["i"])
    mgr.configure("race", rla_config=sys.argv[1], data_root=sys.argv[2], run_file=[])
    mode = sys.argv[4]
    if mode == "wait":
        while time.time() < float(sys.argv[5]):
            pass
    mgr.log_files_gen()
    print(mgr.index, flush=True)
    if mode == "crash":
        raise RuntimeError("boom in training")
    if mode == "hang":
        time.sleep(60)
""")


def run_child(env, config, root, i, mode, *extra):
    return subprocess.Popen([sys.executable, "-c", CHILD, str(config), str(root), str(i), mode, *map(str, extra)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(120)
def test_sixteen_processes_starting_together_get_sixteen_runs(subprocess_env, minimal_config, tmp_path):
    start = time.time() + 4.0
    children = [run_child(subprocess_env, minimal_config, tmp_path / "d", i, "wait", start) for i in range(16)]
    indexes = []
    for child in children:
        out, err = child.communicate(timeout=100)
        assert child.returncode == 0, err
        indexes.append(out.strip())
    assert len(set(indexes)) == 16
    runs = list(iter_run_dirs(tmp_path / "d", task="race"))
    assert len(runs) == 16 and len({r.index for r in runs}) == 16


@pytest.mark.timeout(60)
def test_uncaught_exception_marks_the_run_crashed(subprocess_env, minimal_config, tmp_path):
    child = run_child(subprocess_env, minimal_config, tmp_path / "d", 0, "crash")
    out, err = child.communicate(timeout=50)
    assert child.returncode == 1 and "boom in training" in err
    run = next(iter_run_dirs(tmp_path / "d"))
    info = read_run_info(run.run_info_file)
    assert info["status"] == "crashed" and "RuntimeError: boom in training" in info["error"]


@pytest.mark.timeout(60)
def test_sigterm_marks_the_run_killed(subprocess_env, minimal_config, tmp_path):
    child = run_child(subprocess_env, minimal_config, tmp_path / "d", 0, "hang")
    child.stdout.readline()  # the run exists
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGTERM
    info = read_run_info(next(iter_run_dirs(tmp_path / "d")).run_info_file)
    assert info["status"] == "killed" and info["exit_code"] == 128 + signal.SIGTERM


@pytest.mark.timeout(60)
def test_sigkilled_run_is_reported_crashed(subprocess_env, minimal_config, tmp_path):
    child = run_child(subprocess_env, minimal_config, tmp_path / "d", 0, "hang")
    child.stdout.readline()
    child.kill()
    child.wait(timeout=30)
    info = read_run_info(next(iter_run_dirs(tmp_path / "d")).run_info_file)
    assert info["status"] == "running"  # nobody could write anything ...
    assert effective_status(info) == "crashed"  # ... but the dead process is detected


def test_normal_exit_marks_the_run_finished(subprocess_env, minimal_config, tmp_path):
    child = run_child(subprocess_env, minimal_config, tmp_path / "d", 0, "plain")
    child.communicate(timeout=50)
    info = read_run_info(next(iter_run_dirs(tmp_path / "d")).run_info_file)
    assert info["status"] == "finished" and info["exit_code"] == 0


def test_data_root_defaults_to_the_config_data_root(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "rla_config.yaml").write_text("LOG_USED: [csv]\nDL_FRAMEWORK: none\nDATA_ROOT: ./db\n")
    mgr = ExperimentManager()
    mgr.configure("t", rla_config=str(project / "rla_config.yaml"), run_file=[])
    assert mgr.data_root == (project / "db").resolve()
