"""stdout prints at most one table per STDOUT_INTERVAL plus a progress line; log.txt keeps every table."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

from RLA.config import load_config
from RLA.errors import ConfigError, LoggerError
from RLA.logger import Logger, TimeStepHolder
from RLA.logger.formats.progress import Progress, format_duration
from RLA.logger.formats.stdout import DEFAULT_INTERVAL, StdoutOutputFormat

pytestmark = pytest.mark.timeout(120)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tables(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("| time-step"))


def dump_many(writer: StdoutOutputFormat, clock: FakeClock, count: int, dt: float, start: int = 0) -> None:
    for i in range(count):
        writer.write({"return": float(i), "time-step": start + i, "timestamp": 1.7e9 + i}, start + i)
        clock.now += dt


def test_at_most_one_table_per_interval_and_the_last_row_at_close(capsys) -> None:
    clock = FakeClock()
    writer = StdoutOutputFormat(interval=5, clock=clock)
    dump_many(writer, clock, 1000, 0.001)  # 1 s of dumps: only the first one is a table
    assert tables(capsys.readouterr().out) == 1
    clock.now += 5
    dump_many(writer, clock, 10, 0.001, start=1000)  # the interval passed: one more table
    assert tables(capsys.readouterr().out) == 1
    writer.close()
    out = capsys.readouterr().out
    assert tables(out) == 1 and "| time-step | 1009" in out  # the final values are shown


def test_interval_zero_prints_every_dump(capsys) -> None:
    clock = FakeClock()
    writer = StdoutOutputFormat(interval=0, clock=clock)
    dump_many(writer, clock, 50, 0.001)
    writer.close()
    out = capsys.readouterr().out
    assert tables(out) == 50 and "progress:" not in out


def test_the_timestamp_row_is_not_printed_but_log_txt_keeps_every_table(tmp_path: Path, capsys) -> None:
    steps = TimeStepHolder()
    with Logger(str(tmp_path), ["stdout", "log"], time_step=steps) as log:
        for i in range(30):
            steps.set_time(i)
            log.logkv("return", i)
            log.dumpkvs()
    out = capsys.readouterr().out
    assert "| timestamp" not in out and tables(out) <= 3  # first, maybe one more, the last at close
    text = (tmp_path / "log.txt").read_text()
    assert tables(text) == 30 and text.count("| timestamp") == 30


def test_the_progress_line_shows_step_rate_and_eta(capsys) -> None:
    clock = FakeClock()
    writer = StdoutOutputFormat(interval=5, clock=clock)
    writer.set_total_steps(1000)
    dump_many(writer, clock, 501, 0.01)  # 100 steps per second; step 500 comes 5 s after step 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("progress:")][-1]
    assert "step 500/1000 (50.0%)" in line and "ETA 0:00:05" in line and "steps/s" in line
    writer.close()


def test_without_a_total_there_is_no_eta() -> None:
    progress = Progress()
    for i in range(10):
        progress.add(i * 10, float(i))
    assert progress.rate() == pytest.approx(10.0) and progress.eta() is None
    assert "ETA" not in progress.line(10.0) and "10 dumps" in progress.line(10.0)


def test_a_step_going_back_restarts_the_rate() -> None:
    progress = Progress()
    for i in range(5):
        progress.add(1000 + i * 100, float(i))
    progress.add(0, 5.0)  # resumed from an earlier checkpoint
    assert progress.rate() is None


def test_durations_read_as_clock_times() -> None:
    assert format_duration(3725) == "1:02:05" and format_duration(90061) == "1d 1:01:01"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_progress_line_redrawn_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    clock = FakeClock()
    writer = StdoutOutputFormat(interval=5, clock=clock)
    dump_many(writer, clock, 40, 0.125)  # under 5 s: one table, then an in-place redraw per dump
    text = screen.getvalue()
    assert tables(text) == 1 and text.count("\r\x1b[Kprogress:") == 39
    lines_after_table = text.split("progress:", 1)[1].count("\n")
    assert lines_after_table == 1  # the table's own progress line; the redraws add no line
    writer.write_sequence(["a message"])
    assert screen.getvalue().endswith("\r\x1b[Ka message\n")  # the progress line is cleared first


@pytest.mark.parametrize("bad", [-1, True, "5", float("nan")])
def test_a_bad_stdout_interval_is_a_config_error(bad) -> None:
    with pytest.raises(ConfigError, match="STDOUT_INTERVAL"):
        load_config({"STDOUT_INTERVAL": bad})


def test_the_stdout_interval_default_and_value() -> None:
    assert load_config({}).STDOUT_INTERVAL == DEFAULT_INTERVAL == 5.0
    assert load_config({"STDOUT_INTERVAL": 0}).STDOUT_INTERVAL == 0.0
    with pytest.raises(LoggerError):
        StdoutOutputFormat(interval=-2)


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "100"])
def test_a_bad_total_is_a_logger_error(bad) -> None:
    with pytest.raises(LoggerError, match="total"):
        Logger(None, ["stdout"]).set_total_steps(bad)


def _count_tables_of_a_run(tmp_path: Path, capsys, interval: float) -> str:
    from RLA.easy_log import logger
    from RLA.manager.experiment import ExperimentManager

    mgr = ExperimentManager()
    mgr.set_total_steps(200)
    mgr.configure("t", rla_config={"LOG_USED": ["stdout", "csv"], "DL_FRAMEWORK": "none",
                                   "STDOUT_INTERVAL": interval}, data_root=str(tmp_path / "d"), run_file=[])
    mgr.log_files_gen()
    for step in range(200):
        mgr.set_timestep(step)
        logger.record_tabular("x", step)
        logger.dump_tabular()
    info_total = mgr.run_info["total_steps"]
    mgr.finish()
    assert info_total == 200
    return capsys.readouterr().out


def test_the_manager_hands_the_interval_and_the_total_to_stdout(tmp_path: Path, capsys) -> None:
    assert tables(_count_tables_of_a_run(tmp_path / "a", capsys, 0)) == 200
    out = _count_tables_of_a_run(tmp_path / "b", capsys, 3600)
    assert tables(out) == 2 and "step 199/200 (99.5%)" in out


def test_the_quick_start_prints_far_fewer_lines(tmp_path: Path, subprocess_env) -> None:
    """1,000 dumps printed 5,010 lines (a 5-line table each); now a few dozen."""
    (tmp_path / "rla_config.yaml").write_text("LOG_USED: [stdout, log, csv]\nDL_FRAMEWORK: none\nDATA_ROOT: ./data\n")
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        from RLA import exp_manager, logger, time_step_holder

        exp_manager.set_hyper_param(env_id="Hopper-v4", lr=3e-4, seed=0)
        exp_manager.add_record_param(["env_id", "seed"])
        exp_manager.configure("demo_task", rla_config="rla_config.yaml")
        exp_manager.log_files_gen()
        exp_manager.print_args()
        for step in range(1000):
            time_step_holder.set_time(step)
            logger.record_tabular("return", float(step) ** 0.5)
            logger.dump_tabular()
    """))
    result = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, env=subprocess_env,
                            capture_output=True, text=True, timeout=100)
    assert result.returncode == 0, result.stderr[-2000:]
    lines: List[str] = result.stdout.splitlines()
    assert len(lines) < 100, len(lines)  # 5,010 before; a table per 5 s of a slow machine at most
    assert "| time-step | 999" in result.stdout and "timestamp" not in result.stdout
    log_txt = next((tmp_path / "data" / "log").rglob("log.txt")).read_text()
    assert tables(log_txt) == 1000


def test_a_forgotten_writer_prints_nothing_when_collected(capsys) -> None:
    import gc

    clock = FakeClock()
    writer = StdoutOutputFormat(interval=5, clock=clock)
    dump_many(writer, clock, 3, 0.001)
    capsys.readouterr()
    del writer
    gc.collect()
    assert capsys.readouterr().out == ""  # its last row would land in someone else's output
