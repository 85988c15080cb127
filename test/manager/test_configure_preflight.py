"""configure() refuses LOG_USED typos and missing backends before any run exists; a failed
log_files_gen() leaves a crashed run with its error, never a 'running' one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from RLA.config import load_config
from RLA.errors import BackendNotInstalledError, ConfigError, MissingBackendError
from RLA.install_hints import TORCH_CPU_INDEX
from RLA.logger import output_formats, register_output_format
from RLA.logger.formats.base import KVWriter
from RLA.manager.backup_service import CodeBackupService
from RLA.manager.experiment import ExperimentManager
from RLA.manager.run_info import read_run_info


def configure(tmp_path: Path, **config) -> ExperimentManager:
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=1)
    mgr.configure(
        "t",
        rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none", **config},
        data_root=str(tmp_path / "data"),
        run_file=[],
    )
    return mgr


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)


def test_a_log_used_typo_is_a_config_error_with_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean 'tensorboard'") as info:
        configure(tmp_path, LOG_USED=["csv", "tensorbord"])
    assert "'tensorbord'" in str(info.value) and "LOG_USED" in str(info.value)
    assert not (tmp_path / "data").exists()  # no run folder, not even the data root


def test_a_log_used_typo_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rla_config.yaml"
    path.write_text("LOG_USED: [stdout, csvv]\nDL_FRAMEWORK: none\n")
    with pytest.raises(ConfigError, match="did you mean 'csv'") as info:
        ExperimentManager().configure("t", rla_config=str(path), data_root=str(tmp_path / "data"))
    assert str(path) in str(info.value)


def test_a_registered_custom_format_is_accepted(tmp_path: Path) -> None:
    class Quiet(KVWriter):
        def write(self, kvs, step) -> None:
            pass

    register_output_format("quiet_test_format", Quiet)
    try:
        configure(tmp_path, LOG_USED=["quiet_test_format"])
    finally:
        output_formats.unregister("quiet_test_format")


def test_torch_named_but_missing_fails_in_configure(tmp_path: Path, no_torch: None) -> None:
    with pytest.raises(MissingBackendError) as info:
        configure(tmp_path, DL_FRAMEWORK="torch")
    assert isinstance(info.value, ConfigError) and isinstance(info.value, BackendNotInstalledError)
    assert "DL_FRAMEWORK is 'torch'" in str(info.value) and TORCH_CPU_INDEX in str(info.value)
    assert "DL_FRAMEWORK: none" in str(info.value)
    assert not (tmp_path / "data").exists()


def test_tensorboard_without_tensorboardx_fails_in_configure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(MissingBackendError, match="tensorboardX"):
        configure(tmp_path, LOG_USED=["csv", "tensorboard"])


def test_without_dl_framework_the_installed_backend_is_used(tmp_path: Path, no_torch: None) -> None:
    assert load_config({}).DL_FRAMEWORK == "none"
    mgr = ExperimentManager()
    mgr.configure("t", rla_config={"LOG_USED": ["csv"]}, data_root=str(tmp_path / "data"), run_file=[])
    mgr.log_files_gen()
    try:
        mgr.save_checkpoint(related_variable={"x": 1})  # the numpy backend, no torch needed
        assert list(Path(mgr.checkpoint_dir).glob("checkpoint-*.npz"))
    finally:
        mgr.finish()


def test_without_dl_framework_torch_is_used_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    assert load_config({}).DL_FRAMEWORK == "torch"


class Exploding(KVWriter):
    def __init__(self, log_dir) -> None:
        super().__init__()
        raise RuntimeError("format exploded at start")

    def write(self, kvs, step) -> None:
        pass


def test_an_error_inside_log_files_gen_ends_the_run_as_crashed(tmp_path: Path) -> None:
    register_output_format("exploding_test_format", Exploding)
    try:
        mgr = configure(tmp_path, LOG_USED=["csv", "exploding_test_format"])
        with pytest.raises(RuntimeError, match="format exploded"):
            mgr.log_files_gen()
    finally:
        output_formats.unregister("exploding_test_format")
    info = read_run_info(mgr.layout.run_info_file)
    assert info["status"] == "crashed" and info["exit_code"] == 1 and info["end_time"]
    assert info["error"] == "RuntimeError: format exploded at start"
    assert info["index"] == mgr.index


def test_a_failure_before_run_json_still_records_the_crashed_run(tmp_path: Path) -> None:
    mgr = configure(tmp_path)
    first = mgr.log_files_gen()
    mgr.finish()
    other = tmp_path / "other"
    other.mkdir()
    (other / "archive_tester").write_text("a file where the folder goes")  # its mkdir fails
    mgr.configure(
        "t", rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"}, data_root=str(other), run_file=[]
    )
    with pytest.raises(OSError):
        mgr.log_files_gen()
    info = read_run_info(mgr.layout.run_info_file)
    assert info["index"] == mgr.index != first.index  # its own record, not the previous run's
    assert info["data_root"] == str(other)
    assert info["status"] == "crashed" and "archive_tester" in info["error"]


def test_ctrl_c_inside_log_files_gen_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mgr = configure(tmp_path)

    def interrupt(self, run) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(CodeBackupService, "on_start", interrupt)
    with pytest.raises(KeyboardInterrupt):
        mgr.log_files_gen()
    info = read_run_info(mgr.layout.run_info_file)
    assert info["status"] == "killed" and info["exit_code"] == 130


def test_the_manager_makes_a_new_run_after_a_failed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mgr = configure(tmp_path)

    def fail(self, run) -> None:
        raise OSError("backup failed")

    monkeypatch.setattr(CodeBackupService, "on_start", fail)
    with pytest.raises(OSError):
        mgr.log_files_gen()
    failed = mgr.index
    monkeypatch.undo()
    layout = mgr.log_files_gen()
    assert layout.index != failed and read_run_info(layout.run_info_file)["status"] == "running"
    mgr.finish()
    assert read_run_info(layout.run_info_file)["status"] == "finished"
