"""Run claims: runs that ask for the same instant still get distinct indexes.

Every claimant here reads the same injected clock, so names never differ by time: only the
per-day lock and the scan of the day's runs keep the indexes apart (with a real clock each
process read a different microsecond and the test passed without either).
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from RLA.layout import LOG, iter_run_dirs
from RLA.manager.claim import claim_run
from RLA.naming import DATE_FORMAT, format_run_name, index_time

INSTANT = _dt.datetime(2026, 11, 25, 13, 14, 15, 123456)

CHILD = textwrap.dedent("""
    import datetime, sys, time
    from RLA.manager.experiment import ExperimentManager
    instant = datetime.datetime.fromisoformat(sys.argv[4])
    mgr = ExperimentManager()
    mgr.clock = lambda: instant
    mgr.set_hyper_param(i=int(sys.argv[3]))
    mgr.add_record_param(["i"])
    mgr.configure("race", rla_config=sys.argv[1], data_root=sys.argv[2], run_file=[])
    while time.time() < float(sys.argv[5]):
        pass
    mgr.log_files_gen()
    print(mgr.index, flush=True)
    mgr.finish()
""")

CLAIM_CHILD = textwrap.dedent("""
    import datetime, sys
    from pathlib import Path
    from RLA.manager.claim import claim_run
    instant = datetime.datetime.fromisoformat(sys.argv[2])
    layout, when = claim_run(Path(sys.argv[1]), "race", None, "1.2.3.4", [("i", 1)], clock=lambda: instant)
    print(when.isoformat(), flush=True)
""")


@pytest.mark.timeout(180)
def test_sixteen_processes_asking_for_the_same_instant_get_sixteen_indexes(subprocess_env, minimal_config,
                                                                           tmp_path: Path) -> None:
    start = time.time() + 4.0
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(minimal_config), str(tmp_path / "d"), str(i),
                                  INSTANT.isoformat(), str(start)],
                                 env=subprocess_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i in range(16)]
    indexes = []
    for child in children:
        out, err = child.communicate(timeout=150)
        assert child.returncode == 0, err
        indexes.append(out.strip())
    assert len(set(indexes)) == 16, sorted(indexes)
    runs = list(iter_run_dirs(tmp_path / "d", task="race"))
    assert len(runs) == 16 and len({r.index for r in runs}) == 16
    # All asked for INSTANT: the claims moved forward one microsecond each, in some order.
    assert {index_time(r.index) for r in runs} == {INSTANT + _dt.timedelta(microseconds=k) for k in range(16)}


def test_a_second_claim_of_the_same_instant_moves_one_microsecond(tmp_path: Path) -> None:
    """The scan of the day's runs: a different name at the same instant still gets a new index."""
    first, when1 = claim_run(tmp_path, "t", None, "1.2.3.4", [("seed", 1)], clock=lambda: INSTANT)
    second, when2 = claim_run(tmp_path, "t", None, "1.2.3.4", [("seed", 2)], clock=lambda: INSTANT)
    assert when1 == INSTANT and when2 == INSTANT + _dt.timedelta(microseconds=1)
    assert first.index != second.index and first.name != second.name


def _blocked_on_a_lock(pid: int) -> bool:
    """True when ``pid`` waits for a file lock (a ``->`` line of /proc/locks)."""
    with open("/proc/locks") as handle:
        return any("->" in line and f" {pid} " in line for line in handle)


@pytest.mark.timeout(60)
def test_a_claim_waits_for_the_day_lock(subprocess_env, tmp_path: Path) -> None:
    """While one claimant holds the day's lock (it scanned, it is about to mkdir), another waits.

    The test holds the lock, starts a claim of the same instant, waits until that claim is
    blocked on the lock (or has finished: the lock is missing), then creates its run and
    releases. The claim must then see the run and take the next microsecond.
    """
    day_dir = tmp_path / LOG / "race" / INSTANT.strftime(DATE_FORMAT)
    day_dir.mkdir(parents=True)
    lock_fd = os.open(day_dir / ".rla-claim.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        child = subprocess.Popen([sys.executable, "-c", CLAIM_CHILD, str(tmp_path), INSTANT.isoformat()],
                                 env=subprocess_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 40
        while child.poll() is None and not _blocked_on_a_lock(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.mkdir(day_dir / format_run_name(INSTANT, "1.2.3.4", [("i", 0)]))
    finally:
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        os.close(lock_fd)
    out, err = child.communicate(timeout=40)
    assert child.returncode == 0, err
    assert _dt.datetime.fromisoformat(out.strip()) == INSTANT + _dt.timedelta(microseconds=1)
