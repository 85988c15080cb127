"""The original module-level API ``RLA.easy_log.logger`` over one resettable default logger."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

from RLA import logger as rla_logger
from RLA.easy_log import logger
from RLA.errors import BackendNotInstalledError, LoggerError
from RLA.logger.time_step import time_step_holder

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("name", ["record_tabular", "dump_tabular", "configure", "reset",
                                  "get_tbx_writer", "ma_record_tabular", "warn", "get_dir"])
def test_from_rla_import_logger_gives_the_face_api(name: str) -> None:
    # ``from RLA import logger`` is the core package; the face re-exports its objects.
    assert getattr(rla_logger, name) is getattr(logger, name)


def test_from_rla_import_logger_works_in_a_fresh_process(tmp_path: Path) -> None:
    code = (f"from RLA.logger.core import Logger\n"
            f"from RLA import logger\n"
            f"logger.configure({str(tmp_path)!r}, ['csv'])\n"
            f"logger.record_tabular('k', 1)\n"
            f"logger.dump_tabular()\n"
            f"logger.reset()\n")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(repo)),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert list(pd.read_csv(tmp_path / "progress.csv")["k"]) == [1]


def test_original_names_exist() -> None:
    names = ["record_tabular", "logkv", "logkv_mean", "logkvs", "ma_record_tabular",
             "dump_tabular", "dumpkvs", "getkvs", "log", "debug", "info", "warn", "error",
             "backup", "set_level", "get_dir", "get_tbx_writer", "configure", "reset",
             "get_current", "scoped_configure", "timestep", "log_from_tf_summary",
             "read_csv", "read_json", "read_tb", "register_output_format", "Logger",
             "KVWriter", "SeqWriter", "HumanOutputFormat", "CSVOutputFormat",
             "JSONOutputFormat", "TensorBoardOutputFormat", "ProfileKV", "profile"]
    missing = [n for n in names if not hasattr(logger, n)]
    assert missing == []
    assert (logger.DEBUG, logger.INFO, logger.WARN, logger.ERROR, logger.DISABLED,
            logger.BACKUP) == (10, 20, 30, 40, 50, 60)


def test_before_configure_stdout_only_and_no_temp_dir(capsys: pytest.CaptureFixture[str]) -> None:
    before = set(os.listdir(tempfile.gettempdir()))
    logger.info("hello before configure")
    logger.record_tabular("a", 1)
    row = logger.dump_tabular()
    assert row["a"] == 1 and logger.get_dir() is None
    assert logger.get_current().format_names == ["stdout"]
    out = capsys.readouterr().out
    assert "hello before configure" in out and "| a " in out
    assert set(os.listdir(tempfile.gettempdir())) - before == set()


def test_configure_with_the_manager_signature(tmp_path: Path) -> None:
    seen: List[Dict[str, Any]] = []
    current = logger.configure(dir=str(tmp_path), format_strs=["log", "csv", "json"],
                               hyper_params={"lr": 0.1}, on_dump=seen.append)
    assert logger.get_current() is current and logger.get_dir() == str(tmp_path)
    time_step_holder.set_time(3)
    logger.logkv("r", 1.0)
    logger.dumpkvs()
    assert seen[0]["r"] == 1.0 and seen[0]["time-step"] == 3
    logger.reset()
    assert current.closed and logger.get_dir() is None
    assert list(pd.read_csv(tmp_path / "progress.csv")["r"]) == [1.0]
    assert sorted(os.listdir(tmp_path)) == ["backup.txt", "log.txt", "progress.csv",
                                            "progress.json", "warn.txt"]


def test_configure_closes_the_previous_logger(tmp_path: Path) -> None:
    first = logger.configure(str(tmp_path / "one"), ["csv"])
    logger.record_tabular("a", 1)
    logger.dump_tabular()
    second = logger.configure(str(tmp_path / "two"), ["csv"])
    assert first.closed and not second.closed
    logger.info("goes to two only")
    logger.record_tabular("b", 2)
    logger.dump_tabular()
    logger.reset()
    assert list(pd.read_csv(tmp_path / "one" / "progress.csv").columns)[:1] == ["a"]
    assert "b" in pd.read_csv(tmp_path / "two" / "progress.csv").columns


def test_configure_default_formats_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert logger.configure(str(tmp_path / "a")).format_names == ["stdout", "log", "csv"]
    monkeypatch.setenv("RLA_LOGDIR", str(tmp_path / "env"))
    monkeypatch.setenv("RLA_LOG_FORMAT", "json,csv")
    current = logger.configure()
    assert current.get_dir() == str(tmp_path / "env") and current.format_names == ["json", "csv"]


def test_configure_without_dir_refuses_file_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLA_LOGDIR", raising=False)
    monkeypatch.delenv("RLA_LOG_FORMAT", raising=False)
    assert logger.configure().format_names == ["stdout"]
    with pytest.raises(LoggerError, match="no log directory was given"):
        logger.configure(format_strs=["csv"])


def test_configure_accepts_original_keywords_and_rejects_unknown(tmp_path: Path) -> None:
    logger.configure(str(tmp_path), ["csv"], framework="torch", comm=None)
    with pytest.raises(LoggerError) as info:
        logger.configure(str(tmp_path), ["csv"], fromat_strs=["csv"])
    assert "unknown keyword(s) ['fromat_strs']" in str(info.value)


def test_scoped_configure_restores_the_previous_logger(tmp_path: Path) -> None:
    outer = logger.configure(str(tmp_path / "outer"), ["csv"])
    with logger.scoped_configure(str(tmp_path / "inner"), ["csv"]) as inner:
        assert logger.get_current() is inner
        logger.record_tabular("inner_key", 1)
        logger.dump_tabular()
    assert inner.closed and not outer.closed and logger.get_current() is outer
    assert "inner_key" in pd.read_csv(tmp_path / "inner" / "progress.csv").columns


def test_ma_record_tabular_keeps_the_original_argument_order() -> None:
    for v in (1.0, float("nan"), 3.0):
        logger.ma_record_tabular("ma", v, 2, True)
    assert logger.getkvs()["ma"] == 2.0


def test_timestep_and_profile(tmp_path: Path) -> None:
    time_step_holder.set_time(11)
    assert logger.timestep() == 11

    @logger.profile("work")
    def work() -> int:
        return 5

    assert work() == 5
    with logger.ProfileKV("work"):
        pass
    assert logger.getkvs()["wait_work"] >= 0.0


def test_log_from_tf_summary_is_out_of_scope() -> None:
    with pytest.raises(BackendNotInstalledError) as info:
        logger.log_from_tf_summary(b"")
    assert "needs TensorFlow" in str(info.value) and "record_tabular" in str(info.value)


def test_get_tbx_writer_error_through_the_face(tmp_path: Path) -> None:
    logger.configure(str(tmp_path), ["csv"])
    with pytest.raises(LoggerError, match="'tensorboard' output format is not configured"):
        logger.get_tbx_writer()


def test_readers_round_trip(tmp_path: Path) -> None:
    logger.configure(str(tmp_path), ["csv", "json", "tensorboard"])
    for t in range(3):
        time_step_holder.set_time(t)
        logger.record_tabular("x", t * 1.5)
        logger.dump_tabular()
    logger.reset()
    assert list(logger.read_csv(str(tmp_path / "progress.csv"))["x"]) == [0.0, 1.5, 3.0]
    assert list(logger.read_json(str(tmp_path / "progress.json"))["x"]) == [0.0, 1.5, 3.0]
    assert list(logger.read_tb(str(tmp_path / "tb"))["x"]) == [0.0, 1.5, 3.0]
    with pytest.raises(LoggerError, match="No TensorBoard events to read"):
        logger.read_tb(str(tmp_path / "missing"))


def test_import_rla_logger_stays_light() -> None:
    code = ("import sys, RLA; from RLA import logger; from RLA.easy_log import logger as l2; "
            "heavy = [m for m in ('tensorboardX', 'pandas', 'torch', 'matplotlib', 'numpy') "
            "if m in sys.modules]; print(heavy)")
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(repo))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
