"""A full disk during a dump: a clear DiskFullError, the row in every file format or in none.

On a real 8 MiB tmpfs (root only, else skipped) and with ENOSPC injected at each format's
write, so every format's failure point is covered, not only whichever fills first.
"""
from __future__ import annotations

import errno
import json
import os
import re
import sys
from pathlib import Path
from typing import Callable, Dict, List

import pandas as pd
import pytest

from RLA.errors import DiskFullError, RLAError
from RLA.logger import Logger, TimeStepHolder

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from small_disk import fill, free_space  # noqa: E402

FILES = {"csv": "progress.csv", "json": "progress.json", "log": "log.txt"}
ORDERS = [("csv", "json", "log"), ("json", "log", "csv"), ("log", "csv", "json")]
STEP_LINE = re.compile(r"^\| time-step +\| (\d+) +\|$", re.M)


def steps_in(log_dir: Path, fmt: str) -> List[int]:
    """The time-steps of every complete row a reader finds in one format's file."""
    path = log_dir / FILES[fmt]
    if not path.exists() or path.stat().st_size == 0:
        return []
    if fmt == "csv":
        return pd.read_csv(path)["time-step"].tolist()
    if fmt == "json":
        text = path.read_text()
        assert text.endswith("\n"), "a partial JSON line"
        return [json.loads(line)["time-step"] for line in text.splitlines()]
    text = path.read_text()
    assert text.endswith("\n"), "a partial log.txt table"
    return [int(s) for s in STEP_LINE.findall(text)]


def assert_same_rows_once(log_dir: Path, formats: tuple, expected: List[int]) -> None:
    for fmt in formats:
        assert steps_in(log_dir, fmt) == expected, fmt


def dump(logger: Logger, holder: TimeStepHolder, step: int, **extra: float) -> None:
    holder.set_time(step)
    logger.logkv("reward", step * 0.5)
    logger.logkv("note", f"row {step}, padded " + "x" * 40)
    for key, value in extra.items():
        logger.logkv(key, value)
    logger.dumpkvs()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("formats", ORDERS, ids="-".join)
def test_full_tmpfs_dump_is_a_clear_error_and_a_retry_writes_the_row_once(small_disk: Path, formats) -> None:
    log_dir = small_disk / "run"
    holder = TimeStepHolder()
    with Logger(log_dir, list(formats), time_step=holder) as logger:
        for step in range(5):
            dump(logger, holder, step)
        fill(small_disk)
        failed = None
        for step in range(5, 5000):  # the first dump that needs a new page fails
            try:
                dump(logger, holder, step)
            except DiskFullError as exc:
                failed = (step, exc)
                break
        assert failed is not None, "the full disk never refused a row"
        step, exc = failed
        assert isinstance(exc, RLAError) and isinstance(exc, OSError) and exc.errno == errno.ENOSPC
        assert exc.path in {str(log_dir / name) for name in FILES.values()}
        assert exc.path in str(exc) and exc.free is not None and f"{exc.free} bytes free" in str(exc)
        assert_same_rows_once(log_dir, formats, list(range(step)))
        with pytest.raises(DiskFullError):  # still full: the pending row fails again, nothing is left
            logger.dumpkvs()
        assert_same_rows_once(log_dir, formats, list(range(step)))
        free_space(small_disk)
        logger.dumpkvs()  # the retry writes the pending row once
        dump(logger, holder, step + 1)
    assert_same_rows_once(log_dir, formats, list(range(step + 2)))
    assert not [p for p in log_dir.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("formats", ORDERS, ids="-".join)
def test_full_tmpfs_widening_the_csv_header_leaves_every_file_as_it_was(small_disk: Path, formats) -> None:
    """A new key rewrites progress.csv through a temp: on a full disk no format keeps the row."""
    log_dir = small_disk / "run"
    holder = TimeStepHolder()
    with Logger(log_dir, list(formats), time_step=holder) as logger:
        for step in range(3):
            dump(logger, holder, step)
        before = (log_dir / "progress.csv").read_bytes()
        fill(small_disk)
        with pytest.raises(DiskFullError, match="progress"):
            for step in range(3, 5000):
                dump(logger, holder, step, new_key=1.0)
        assert step == 3 and (log_dir / "progress.csv").read_bytes() == before
        assert_same_rows_once(log_dir, formats, list(range(step)))
        free_space(small_disk)
        logger.dumpkvs()
    assert_same_rows_once(log_dir, formats, list(range(step + 1)))
    assert pd.read_csv(log_dir / "progress.csv")["new_key"].tolist()[-1] == 1.0


def _fail_writes_to(name: str, partial: bool) -> Callable[[int, bytes], int]:
    """An ``os.write`` that raises ENOSPC for the file ``name`` (after half the bytes if ``partial``)."""
    real_write = os.write
    state: Dict[str, bool] = {"armed": False, "half_done": False}

    def fake_write(fd: int, data: bytes) -> int:
        if state["armed"] and os.readlink(f"/proc/self/fd/{fd}").endswith("/" + name):
            if partial and not state["half_done"]:
                state["half_done"] = True
                return real_write(fd, bytes(data)[: max(len(data) // 2, 1)])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    fake_write.state = state  # type: ignore[attr-defined]
    return fake_write


@pytest.mark.parametrize("partial", [False, True], ids=["nothing-written", "half-written"])
@pytest.mark.parametrize("failing", ["csv", "json", "log"])
@pytest.mark.parametrize("formats", ORDERS, ids="-".join)
def test_enospc_in_any_format_takes_the_row_back_from_every_format(tmp_path: Path, monkeypatch, formats,
                                                                   failing: str, partial: bool) -> None:
    holder = TimeStepHolder()
    fake = _fail_writes_to(FILES[failing], partial)
    monkeypatch.setattr(os, "write", fake)
    with Logger(tmp_path, list(formats), time_step=holder) as logger:
        for step in range(3):
            dump(logger, holder, step)
        sizes = {fmt: (tmp_path / FILES[fmt]).stat().st_size for fmt in formats}
        fake.state["armed"] = True  # type: ignore[attr-defined]
        with pytest.raises(DiskFullError) as info:
            dump(logger, holder, 3)
        assert info.value.path == str(tmp_path / FILES[failing])
        assert {fmt: (tmp_path / FILES[fmt]).stat().st_size for fmt in formats} == sizes
        assert_same_rows_once(tmp_path, formats, [0, 1, 2])
        fake.state["armed"] = False  # type: ignore[attr-defined]
        logger.dumpkvs()
        dump(logger, holder, 4)
    assert_same_rows_once(tmp_path, formats, [0, 1, 2, 3, 4])


def test_a_failed_dump_keeps_the_row_pending_under_newer_values(tmp_path: Path, monkeypatch) -> None:
    """Values recorded after the failure overwrite the pending row's (last write wins); one row results."""
    holder = TimeStepHolder(7)
    fake = _fail_writes_to("progress.json", partial=False)
    monkeypatch.setattr(os, "write", fake)
    with Logger(tmp_path, ["csv", "json"], time_step=holder) as logger:
        logger.logkv("a", 1)
        logger.logkv("b", 1)
        fake.state["armed"] = True  # type: ignore[attr-defined]
        with pytest.raises(DiskFullError):
            logger.dumpkvs()
        fake.state["armed"] = False  # type: ignore[attr-defined]
        logger.logkv("b", 2)
        row = logger.dumpkvs()
    assert (row["a"], row["b"], row["time-step"]) == (1, 2, 7)
    assert pd.read_csv(tmp_path / "progress.csv")[["a", "b", "time-step"]].values.tolist() == [[1, 2, 7]]


def test_a_full_disk_on_a_text_line_is_a_disk_full_error_without_a_partial_line(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    fake = _fail_writes_to("warn.txt", partial=True)
    monkeypatch.setattr(os, "write", fake)
    with Logger(tmp_path, ["log"], time_step=TimeStepHolder()) as logger:
        logger.warn("first")
        fake.state["armed"] = True  # type: ignore[attr-defined]
        with pytest.raises(DiskFullError, match="warn.txt"):
            logger.warn("second")
    assert (tmp_path / "warn.txt").read_text().splitlines() == ["[WARN] 0 : first"]


@pytest.mark.timeout(90)
def test_full_tmpfs_tensorboard_is_a_clear_error_never_a_hang(small_disk: Path) -> None:
    """tensorboardX's writer thread died on ENOSPC and the 11th event then blocked forever."""
    pytest.importorskip("tensorboardX")
    log_dir = small_disk / "run"
    holder = TimeStepHolder()
    with Logger(log_dir, ["tensorboard"], time_step=holder) as logger:
        dump(logger, holder, 0)
        logger.flush()
        fill(small_disk)
        error = None
        for step in range(1, 3000):  # hung after about 120 dumps without the guard
            try:
                dump(logger, holder, step)
                if step % 100 == 0:
                    logger.flush()
            except DiskFullError as exc:
                error = exc
                break
        assert error is not None and "tfevents" in error.path and error.path in str(error)
        for later in range(step + 1, step + 50):  # reported once; later events are dropped, no hang
            dump(logger, holder, later)
        logger.flush()
        free_space(small_disk)
