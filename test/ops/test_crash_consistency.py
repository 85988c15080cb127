"""Interrupted delete/archive/migrate leave no split run and lose no file once repaired.

Each trial forks a child running the real ``rla`` command (its parser built once, in the
parent) on a fresh copy of a 4-run database in RAM (see conftest.py), stops it (at a fault point for sure, or by SIGKILL at a random time), repairs
(``rla fsck --repair`` or the same command again) and compares every file with a manifest
taken before (RLA.ops.testing.evaluate).
"""
from __future__ import annotations

import os
import random

import pytest

from RLA.ops import steps, testing
from RLA.ops.faults import FAULT_STATUS

OPS = list(testing.OPS)
RUNS = testing.DEFAULT_RUNS
STEPS = RUNS * 6
#: Every window of an operation: before and after the journal, mid data type, between
#: data types and runs, before the journal goes away.
FAULTS = ["journal-written", "file-copied:2", "file-copied:9", "staged:1", "staged:5", "step-done:1",
          "step-done:4", f"step-done:{STEPS // 2}",
          f"step-done:{STEPS - 1}", "run-done:1", f"run-done:{RUNS - 1}", "before-journal-removed"]
#: Fault points an operation never reaches (renames within one filesystem copy nothing).
UNREACHED = {"move": ("staged", "file-copied"), "purge": ("file-copied",), "copy": ()}
KILLS = 20


def _reached(op: str, fault: str) -> bool:
    return fault.split(":")[0] not in UNREACHED[testing.OPS[op][1]]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("op", OPS)
def test_a_stop_at_every_fault_point_is_repaired_whole(op, template, work):
    for i, fault in enumerate(FAULTS):
        how = "fsck" if i % 2 == 0 else "rerun"
        outcome, status = testing.fault_trial(template, work, op, fault, how)
        assert not outcome.bad, (fault, how, outcome.notes)
        if _reached(op, fault):
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == FAULT_STATUS, (fault, status)
            # the journal was written: the repair finishes the operation for every run
            assert outcome.done == RUNS, (fault, how, outcome.notes)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("op", OPS)
def test_random_sigkills_leave_no_split_run_and_lose_no_file(op, template, work):
    window = testing.measure(template, work, op, reps=3)
    delays = testing.kill_times(random.Random(f"kills-{op}"), window, KILLS)
    for i, delay in enumerate(delays):
        outcome = testing.kill_trial(template, work, op, delay, "fsck" if i % 2 == 0 else "rerun")
        assert not outcome.bad, (i, delay, outcome.notes)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("op", ["delete", "archive", "migrate --move"])
def test_moves_across_filesystems_survive_a_stop_at_every_point(op, template, work, monkeypatch):
    """A data-type folder linked to another disk: rename fails with EXDEV, the move copies
    through the partial name and removes the source through the to-be-deleted name."""
    monkeypatch.setattr(steps, "_rename", testing.cross_device(steps._rename))
    for i, fault in enumerate(["file-copied:4", "staged:1", "staged:3", "step-done:2", "step-done:7",
                               "run-done:2"]):
        outcome, status = testing.fault_trial(template, work, op, fault, "fsck" if i % 2 else "rerun")
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == FAULT_STATUS, (fault, status)
        assert not outcome.bad and outcome.done == RUNS, (fault, outcome.notes)


@pytest.mark.timeout(120)
def test_an_interrupted_restore_is_repaired_whole(template, work):
    """archive --restore moves runs back from arc/ with the same journal."""
    from rla_scripts.cli import main
    for i, fault in enumerate(["journal-written", "step-done:5", "run-done:2", "before-journal-removed"]):
        root = testing.fresh(template, work)
        runs = testing._runs(root)
        before = {run: testing.manifest_of(run) for run in runs}
        assert testing._quiet_main(["archive", "--task", "demo", "--yes", "--data-root", str(root)]) == 0
        status = testing.wait(testing.fork_cli(root, ["archive", "--task", "demo", "--restore", "--yes"], fault))
        assert os.WEXITSTATUS(status) == FAULT_STATUS
        if i % 2:
            main(["fsck", "--repair", "--data-root", str(root)])
        else:
            testing.wait(testing.fork_cli(root, ["archive", "--task", "demo", "--restore", "--yes"]))
        for run, manifest in before.items():
            assert testing.manifest_of(run) == manifest, fault
            assert not any(os.path.lexists(p) for p in run.moved(archived=True).existing_paths().values())
        assert not testing._leftovers(root)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("op", ["migrate", "migrate --move"])
def test_a_run_json_rewrite_killed_half_way_leaves_no_temp_file(op, template, work):
    """A kill inside the atomic rewrite of the target's run.json leaves its temp file; the
    repair rewrites run.json and removes it (a random kill found this window)."""
    root = testing.fresh(template, work)
    before = {run: testing.manifest_of(run) for run in testing._runs(root)}
    testing.wait(testing.fork_op(root, op, "step-done:6"))  # the first run's data types are all there
    first = min(before, key=lambda run: run.name)
    temp = first.moved(task=testing.TARGET_TASK).log_dir / ".run.json.k1ll3d.tmp"
    temp.write_text('{"task": "demo", "half')
    testing.repair(root, op, "fsck")
    outcome = testing.evaluate(op, root, before)
    assert not outcome.bad and outcome.done == RUNS, outcome.notes


@pytest.mark.timeout(180)
def test_a_real_rla_process_stopped_or_killed_is_repaired_whole(template, work, subprocess_env):
    """The same through `python -m rla_scripts.cli` in a fresh interpreter: the fault point
    is set by its environment variable, then SIGKILLs at random times of the whole command."""
    import signal
    import subprocess
    import sys
    import time
    from RLA.ops.faults import FAULT_ENV

    def command(root):
        return [sys.executable, "-m", "rla_scripts.cli", "archive", "--task", "demo", "--yes",
                "--data-root", str(root)]
    root = testing.fresh(template, work)
    before = {run: testing.manifest_of(run) for run in testing._runs(root)}
    start = time.monotonic()
    done = subprocess.run(command(root), env=dict(subprocess_env, **{FAULT_ENV: "step-done:5"}),
                          capture_output=True, timeout=120)
    took = time.monotonic() - start  # start-up, selection and the first run's moves
    assert done.returncode == FAULT_STATUS
    testing.repair(root, "archive", "fsck")
    outcome = testing.evaluate("archive", root, before)
    assert not outcome.bad and outcome.done == RUNS, outcome.notes
    rng = random.Random("real-process")
    for _ in range(3):
        root = testing.fresh(template, work)
        before = {run: testing.manifest_of(run) for run in testing._runs(root)}
        child = subprocess.Popen(command(root), env=subprocess_env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5 * took, 1.5 * took))  # around the moves, past the start-up
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        testing.repair(root, "archive", "rerun")
        assert not testing.evaluate("archive", root, before).bad



def _stopped(template, work, op):
    """A fresh database whose ``op`` stopped after 3 data types (its journal pending)."""
    root = testing.fresh(template, work)
    before = {run: testing.manifest_of(run) for run in testing._runs(root)}
    testing.wait(testing.fork_op(root, op, "step-done:3"))
    return root, before


@pytest.mark.timeout(180)
@pytest.mark.parametrize("op", ["delete", "archive --copy", "migrate --move"])
def test_random_sigkills_of_the_repair_itself_are_repaired_by_the_next_one(op, template, work):
    """`rla fsck --repair` of an interrupted operation, SIGKILLed at a random time of its own
    (10 times), then a last repair: every run whole where the operation sends it."""
    import signal
    import time
    root, _ = _stopped(template, work, op)
    start = time.monotonic()
    testing.wait(testing.fork_cli(root, ["fsck", "--repair"]))
    took = time.monotonic() - start
    rng = random.Random(f"repair-{op}")
    for _ in range(10):
        root, before = _stopped(template, work, op)
        child = testing.fork_cli(root, ["fsck", "--repair"])
        time.sleep(rng.uniform(0, took))
        os.kill(child, signal.SIGKILL)  # a zombie until waited for: never ProcessLookupError
        testing.wait(child)
        testing.repair(root, op, "fsck")
        outcome = testing.evaluate(op, root, before)
        assert not outcome.bad and outcome.done == RUNS, outcome.notes
