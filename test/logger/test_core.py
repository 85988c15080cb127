"""Logger recording semantics: rows, exclude, freq, means, moving averages, levels, hooks."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Mapping

import numpy as np
import pandas as pd
import pytest

from RLA.errors import LoggerError
from RLA.logger import BACKUP, DISABLED, ERROR, INFO, WARN, KVWriter, Logger, TimeStepHolder

pytestmark = pytest.mark.timeout(60)


class ListWriter(KVWriter):
    """A format that keeps every row it receives (for assertions)."""

    def __init__(self, name: str = "memory") -> None:
        super().__init__()
        self.name = name
        self.rows: List[Dict[str, Any]] = []
        self.steps: List[int] = []

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        self._check_open()
        self.rows.append(dict(kvs))
        self.steps.append(step)


def make(tmp_path: Path, *writers: KVWriter, **kw: Any) -> Logger:
    return Logger(tmp_path, list(writers) or [ListWriter()], time_step=TimeStepHolder(), **kw)


def test_dump_adds_time_step_and_timestamp(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    lg.time_step.set_time(42)
    lg.logkv("a", 1.5)
    row = lg.dumpkvs()
    assert row["a"] == 1.5 and row["time-step"] == 42
    assert abs(row["timestamp"] - __import__("time").time()) < 60
    assert w.rows == [row] and w.steps == [42]


def test_empty_dump_writes_nothing_and_returns_empty(tmp_path: Path) -> None:
    w = ListWriter()
    lg = Logger(tmp_path, [w, "csv"], time_step=TimeStepHolder())
    assert lg.dumpkvs() == {}
    assert w.rows == [] and not (tmp_path / "progress.csv").exists()
    lg.logkv("a", 1)
    lg.dumpkvs()
    assert lg.dumpkvs() == {}
    lg.close()
    assert len(pd.read_csv(tmp_path / "progress.csv")) == 1


def test_last_write_wins_and_row_is_cleared(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    lg.record_tabular("a", 1)
    lg.logkv("a", 2)
    assert lg.getkvs() == {"a": 2}
    lg.dump_tabular()
    assert lg.getkvs() == {}
    assert w.rows[0]["a"] == 2


def test_user_time_step_is_kept(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    lg.time_step.set_time(5)
    lg.logkv("time-step", 7)
    lg.dumpkvs()
    assert w.rows[0]["time-step"] == 7 and w.steps == [7]


def test_exclude_matches_exact_format_names(tmp_path: Path) -> None:
    a, b, ab = ListWriter("a"), ListWriter("b"), ListWriter("ab")
    lg = make(tmp_path, a, b, ab)
    lg.logkv("x", 1, exclude="ab")  # a substring test would also drop it from a and b
    lg.logkv("y", 2, exclude=("a", "b"))
    lg.logkv("z", 3)
    lg.dumpkvs()
    assert set(a.rows[0]) - {"time-step", "timestamp"} == {"x", "z"}
    assert set(b.rows[0]) - {"time-step", "timestamp"} == {"x", "z"}
    assert set(ab.rows[0]) - {"time-step", "timestamp"} == {"y", "z"}
    lg.logkv("x", 4)  # exclusions last for one row only
    lg.dumpkvs()
    assert ab.rows[1]["x"] == 4


def test_freq_records_only_after_enough_time_steps(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    for t in range(0, 25):
        lg.time_step.set_time(t)
        lg.logkv("slow", t, freq=10)
        lg.logkv("fast", t)
        lg.dumpkvs()
    recorded = [r["slow"] for r in w.rows if "slow" in r]
    assert recorded == [0, 10, 20]


def test_freq_records_again_when_the_time_step_goes_back(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    for t in (100, 105, 20, 25, 30):  # a resumed run restarts from an earlier checkpoint
        lg.time_step.set_time(t)
        lg.logkv("slow", t, freq=10)
        lg.logkv("fast", t)
        lg.dumpkvs()
    assert [r["slow"] for r in w.rows if "slow" in r] == [100, 20, 30]


def test_logkv_mean_averages_within_a_row(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    for v in (1, 2, 3, 6):
        lg.logkv_mean("m", v)
    lg.dumpkvs()
    lg.logkv_mean("m", 10)
    lg.dumpkvs()
    assert w.rows[0]["m"] == pytest.approx(3.0) and w.rows[1]["m"] == pytest.approx(10.0)


def test_logkv_mean_rejects_non_numbers(tmp_path: Path) -> None:
    lg = make(tmp_path)
    with pytest.raises(LoggerError, match="logkv_mean needs numbers for 'm'"):
        lg.logkv_mean("m", "abc")


def test_ma_record_emits_once_window_is_full(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    for v in range(6):
        lg.ma_record_tabular("ma", v, 3)
        lg.logkv("v", v)
        lg.dumpkvs()
    assert [r.get("ma") for r in w.rows] == [None, None, 1.0, 2.0, 3.0, 4.0]


def test_ma_record_nan_handling(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    for v in (1.0, float("nan"), 3.0, 5.0):
        lg.ma_record_tabular("skip", v, 2, ignore_nan=True)
        lg.ma_record_tabular("keep", v, 2)
        lg.logkv("v", v)
        lg.dumpkvs()
    assert [r.get("skip") for r in w.rows] == [None, None, 2.0, 4.0]
    keep = [r.get("keep") for r in w.rows]
    assert keep[0] is None and math.isnan(keep[1]) and math.isnan(keep[2]) and keep[3] == 4.0


def test_ma_record_rejects_bad_window(tmp_path: Path) -> None:
    lg = make(tmp_path)
    with pytest.raises(LoggerError, match="needs a positive int window"):
        lg.ma_record_tabular("ma", 1.0, 0)


def test_logkvs_and_log_key_value(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    lg.logkvs({"a": 1, "b": 2}, prefix="p/")
    lg.log_key_value(["c", "d"], [3, 4], prefix_name="q/")
    lg.dumpkvs()
    assert {k: w.rows[0][k] for k in ("p/a", "p/b", "q/c", "q/d")} == {"p/a": 1, "p/b": 2, "q/c": 3, "q/d": 4}
    with pytest.raises(LoggerError, match="as many values as keys"):
        lg.log_key_value(["a"], [1, 2])


def test_numpy_and_torch_scalars_become_python_numbers(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    w = ListWriter()
    lg = make(tmp_path, w)
    lg.logkv("np32", np.float32(0.5))
    lg.logkv("np0d", np.array(3))
    lg.logkv("torch", torch.tensor(2.5))
    lg.logkv("arr", np.arange(3))
    lg.dumpkvs()
    row = w.rows[0]
    assert (type(row["np32"]), type(row["np0d"]), type(row["torch"])) == (float, int, float)
    assert isinstance(row["arr"], np.ndarray)


def test_bad_key_is_rejected(tmp_path: Path) -> None:
    lg = make(tmp_path)
    with pytest.raises(LoggerError, match="string without line breaks"):
        lg.logkv(3, 1.0)
    with pytest.raises(LoggerError, match="Found: 'a\\\\nb'"):
        lg.logkv("a\nb", 1.0)


def test_on_dump_receives_a_copy_of_each_row(tmp_path: Path) -> None:
    seen: List[Dict[str, Any]] = []
    lg = make(tmp_path, on_dump=seen.append)
    lg.logkv("a", 1)
    row = lg.dumpkvs()
    lg.dumpkvs()  # empty: no call
    assert seen == [row] and seen[0] is not row


def test_a_failing_format_does_not_starve_the_others(tmp_path: Path) -> None:
    class Broken(ListWriter):
        def write(self, kvs: Mapping[str, Any], step: int) -> None:
            raise OSError("disk on fire")

    good = ListWriter("good")
    lg = make(tmp_path, Broken("bad"), good)
    lg.logkv("a", 1)
    with pytest.raises(OSError, match="disk on fire"):
        lg.dumpkvs()
    assert good.rows[0]["a"] == 1


def test_levels_route_text_to_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lg = Logger(tmp_path, ["stdout", "log"], time_step=TimeStepHolder(7))
    lg.debug("hidden debug")
    lg.info("plain info")
    lg.warn("careful")
    lg.error("broken")
    lg.backup("key: lr, value: 0.1")
    lg.set_level(DISABLED)
    lg.warn("silenced")
    lg.backup("still kept")
    lg.close()
    warn_txt = (tmp_path / "warn.txt").read_text().splitlines()
    assert warn_txt == ["[WARN] 7 : careful", "[ERROR] 7 : broken"]
    assert (tmp_path / "backup.txt").read_text().splitlines() == [
        "[BACKUP] 7 : key: lr, value: 0.1", "[BACKUP] 7 : still kept"]
    log_txt = (tmp_path / "log.txt").read_text()
    assert log_txt.startswith(f"Logging to {tmp_path}\n")
    assert "plain info" in log_txt and "hidden debug" not in log_txt and "silenced" not in log_txt
    out = capsys.readouterr().out
    assert "[WARN] 7 : careful" in out and "hidden debug" not in out
    assert (DEBUG_LEVEL := 10) < INFO < WARN < ERROR < DISABLED < BACKUP and DEBUG_LEVEL == 10


def test_warn_and_backup_files_always_created(tmp_path: Path) -> None:
    Logger(tmp_path, [], time_step=TimeStepHolder()).close()
    assert (tmp_path / "warn.txt").read_text() == ""
    assert (tmp_path / "backup.txt").read_text() == ""


def test_close_is_idempotent_and_blocks_further_dumps(tmp_path: Path) -> None:
    w = ListWriter()
    lg = make(tmp_path, w)
    with lg:
        lg.logkv("a", 1)
    lg.close()
    assert lg.closed and w.closed
    lg.logkv("a", 2)
    with pytest.raises(LoggerError, match="The logger is closed"):
        lg.dumpkvs()


def test_get_tbx_writer_without_tensorboard_is_a_clear_error(tmp_path: Path) -> None:
    lg = Logger(tmp_path, ["csv"], time_step=TimeStepHolder())
    with pytest.raises(LoggerError) as info:
        lg.get_tbx_writer()
    message = str(info.value)
    assert "'tensorboard' output format is not configured" in message
    assert "formats ['csv']" in message and "LOG_USED" in message
    lg.close()


def test_bad_format_spec_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(LoggerError, match="must be a name or a KVWriter"):
        Logger(tmp_path, [42], time_step=TimeStepHolder())  # type: ignore[list-item]


def test_duplicate_format_names_are_opened_once(tmp_path: Path) -> None:
    lg = Logger(tmp_path, ["csv", "csv", "log"], time_step=TimeStepHolder())
    assert lg.format_names == ["csv", "log"]
    lg.close()
