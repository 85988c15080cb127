"""A heartbeat that cannot be written is reported once per distinct failure, never raised."""
from __future__ import annotations

import errno
from typing import List

from RLA.manager.lifecycle import Heartbeat


class Beat:
    def __init__(self) -> None:
        self.fail = True

    def __call__(self) -> None:
        if self.fail:
            raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failing_heartbeat_is_reported_once_and_again_after_a_recovery():
    seen: List[BaseException] = []
    beat = Beat()
    heartbeat = Heartbeat(beat, interval=3600, on_error=seen.append)  # the thread never beats by itself
    try:
        for _ in range(5):
            heartbeat.beat_once()
        assert len(seen) == 1 and seen[0].errno == errno.ENOSPC
        beat.fail = False
        heartbeat.beat_once()
        beat.fail = True
        heartbeat.beat_once()
        assert len(seen) == 2
    finally:
        heartbeat.close()


def test_the_default_report_goes_to_stderr(capsys):
    heartbeat = Heartbeat(Beat(), interval=3600)
    try:
        heartbeat.beat_once()
    finally:
        heartbeat.close()
    err = capsys.readouterr().err
    assert "heartbeat could not be written" in err and "No space left" in err


def test_a_reporter_that_raises_does_not_stop_the_heartbeat():
    def bad_reporter(exc: BaseException) -> None:
        raise RuntimeError("reporter broke")

    heartbeat = Heartbeat(Beat(), interval=3600, on_error=bad_reporter)
    try:
        heartbeat.beat_once()  # must not raise
    finally:
        heartbeat.close()
