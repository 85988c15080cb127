"""Time and memory trackers: exact statistics with a fake clock, and logging through the logger."""
from __future__ import annotations

import pandas as pd
import pytest

from RLA.errors import RLAError
from RLA.trackers import MemoryTracker, TimeTracker


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.timeout(30)
def test_time_tracker_counts_calls_totals_and_share_of_wall_time():
    clock = FakeClock()
    tracker = TimeTracker(clock)
    for _ in range(3):
        with tracker("rollout"):
            clock.now += 2.0
        clock.now += 1.0  # untracked work
    stats = tracker.stats("rollout")
    assert stats == {"calls": 3, "total": 6.0, "per_call": 2.0, "share": 6.0 / 9.0}


@pytest.mark.timeout(30)
def test_profile_decorator_and_exceptions_still_count():
    clock = FakeClock()
    tracker = TimeTracker(clock)

    @tracker.profile("update")
    def update(fail: bool) -> None:
        clock.now += 0.5
        if fail:
            raise ValueError("boom")

    update(False)
    with pytest.raises(ValueError):
        update(True)
    assert tracker.stats("update")["calls"] == 2 and tracker.stats("update")["total"] == 1.0


@pytest.mark.timeout(30)
def test_unpaired_start_stop_are_errors():
    tracker = TimeTracker()
    with pytest.raises(RLAError, match="was not started"):
        tracker.stop("x")
    tracker.start("x")
    with pytest.raises(RLAError, match="already being timed"):
        tracker.start("x")


@pytest.mark.timeout(30)
def test_reset_forgets_sections():
    clock = FakeClock()
    tracker = TimeTracker(clock)
    with tracker("a"):
        clock.now += 1
    tracker.reset()
    assert tracker.summary() == {}


@pytest.mark.timeout(60)
def test_trackers_log_through_the_logger_into_progress_csv(tmp_path):
    from RLA.easy_log import logger

    clock = FakeClock()
    tracker = TimeTracker(clock)
    with tracker("env"):
        clock.now += 3.0
    logger.configure(dir=str(tmp_path), format_strs=["csv"])
    try:
        tracker.log()
        MemoryTracker().log()
        logger.record_tabular("x", 1)
        logger.dump_tabular()
    finally:
        logger.reset()
    row = pd.read_csv(tmp_path / "progress.csv").iloc[0]
    assert row["time_used/env/calls"] == 1 and row["time_used/env/total"] == 3.0
    assert row["time_used/env/share"] == 1.0
    assert row["memory/peak_rss_mb"] > 1 and row["memory/rss_mb"] > 1


@pytest.mark.timeout(30)
def test_log_accepts_a_plain_function_and_exclude_goes_to_the_logger():
    seen = {}
    clock = FakeClock()
    tracker = TimeTracker(clock)
    with tracker("a"):
        clock.now += 1
    tracker.log(lambda k, v: seen.__setitem__(k, v), prefix="t/")
    assert seen["t/a/calls"] == 1

    class Recorder:
        def __init__(self):
            self.calls = []

        def record_tabular(self, key, val, exclude=None):
            self.calls.append((key, exclude))

    rec = Recorder()
    MemoryTracker().log(rec, exclude=["csv"])
    assert rec.calls and all(ex == ["csv"] for _, ex in rec.calls)
