"""The dashboard's warm runs table and background index refresh (RLA/ui/table.py, fresh.py).

The table answers filters from the index without decoding records; these tests check it
selects exactly what :func:`RLA.query.select_runs` selects, and that what happens on disk
reaches the page through the background refresh (not only through a request's own refresh).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Any, Dict, Optional

import pytest
from starlette.testclient import TestClient

from RLA.query import select_runs
from RLA.query.testing import make_run
from RLA.ui.app import create_app
from RLA.ui.runs import RunFilter, RunsSource, runs_page, task_counts

WAIT_S = 20.0
#: Refresh settings under which nothing but the background loop (or an invalidate) refreshes.
LOOP_ONLY = {"period_s": 0.05, "stale_s": 3600.0, "idle_s": 3600.0}
NEVER = {"period_s": 3600.0, "stale_s": 3600.0, "idle_s": 3600.0}
#: The same, refreshing in this process (the table tests need no child process).
HERE = dict(NEVER, worker=False)

FILTERS = [
    {},
    {"where": "lr == 1e-4"},
    {"where": "lr >= 3e-4 and seed < 2"},
    {"where": "not (seed > 0) or algo == 'sac'"},
    {"where": "seed in [0, 2]"},
    {"where": "last('return') > 150"},
    {"where": "matches(algo, 'd.n')"},  # SQL cannot decide: the Python evaluator does
    {"where": "lr * 2 > 1e-3"},  # arithmetic: Python too
    {"where": "status == 'running'"},
    {"where": "host is not None and seed < 1"},  # a run column: Python
    {"task": "dqn"},
    {"task": "dqn/CartPole", "where": "seed == 1"},
    {"status": ["crashed", "running"]},
    {"task": "sac", "status": ["finished"], "where": "seed == 0"},  # a known task, every run filtered out
    {"since": "2026/11/20", "until": "2026/11/20"},
    {"since": "2026-11-20-09-05"},
    {"archived": True},
    {"archived": None, "where": "seed == 0"},
]


def _all_pages(source: RunsSource, flt: RunFilter) -> Dict[str, Any]:
    page = runs_page(source, flt, sort="index", limit=1000, columns=["index", "status"])
    return {row["index"]: row["status"] for row in page["rows"]}


@pytest.mark.parametrize("options", FILTERS, ids=[repr(f) for f in FILTERS])
def test_warm_table_selects_what_select_runs_selects(demo, options):
    make_run(
        demo["root"],
        task="dqn/CartPole",
        params={"algo": "dqn", "lr": 1e-4, "seed": 5},
        archived=True,
        curves={"return": [1.0, 2.0]},
        when=_dt.datetime(2026, 11, 21, 8, 0, 0),
    )
    expected = select_runs(demo["root"], **{k: v for k, v in options.items()})
    source = RunsSource(demo["root"], **HERE)
    try:
        got = _all_pages(source, RunFilter(**options))
    finally:
        source.close()
    assert got == {row.index: row.status for row in expected.runs}
    assert got or options.get("task") == "sac"  # the others select something: empty is a failure


def test_task_counts_count_the_scope(demo):
    source = RunsSource(demo["root"], **HERE)
    try:
        assert task_counts(source)["dqn/CartPole"] == 11
        assert task_counts(source, archived=True) == {}
    finally:
        source.close()


def _wait_for(check, message: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def test_a_new_run_reaches_the_table_through_the_background_refresh(demo):
    source = RunsSource(demo["root"], **LOOP_ONLY)
    try:
        flt = RunFilter(where="seed == 42")
        assert runs_page(source, flt)["total"] == 0  # the first request builds the table
        new = make_run(
            demo["root"],
            task="dqn/CartPole",
            params={"algo": "dqn", "lr": 1e-4, "seed": 42},
            curves={"return": [1.0]},
        )
        _wait_for(
            lambda: [r["index"] for r in runs_page(source, flt)["rows"]] == [new.index],
            "the new run never appeared (no background refresh)",
        )
    finally:
        source.close()


def test_requests_between_refreshes_do_not_walk_the_tree(demo):
    source = RunsSource(demo["root"], **NEVER)
    try:
        flt = RunFilter(where="seed == 43")
        assert runs_page(source, flt)["total"] == 0
        make_run(demo["root"], task="dqn/CartPole", params={"algo": "dqn", "lr": 1e-4, "seed": 43})
        assert runs_page(source, flt)["total"] == 0  # answered from the last refresh
        source.refresher.invalidate()
        assert runs_page(source, flt)["total"] == 1
    finally:
        source.close()


def test_a_stale_snapshot_is_refreshed_by_the_request(demo):
    source = RunsSource(demo["root"], period_s=3600.0, stale_s=0.0, idle_s=3600.0)
    try:
        flt = RunFilter(where="seed == 44")
        assert runs_page(source, flt)["total"] == 0
        make_run(demo["root"], task="dqn/CartPole", params={"algo": "dqn", "lr": 1e-4, "seed": 44})
        assert runs_page(source, flt)["total"] == 1
    finally:
        source.close()


def test_a_run_whose_process_ended_is_not_shown_running(demo):
    import socket
    import subprocess
    import sys

    from RLA.fs import atomic_write_json, read_json
    from RLA.ui.lookup import resolve_run

    source = RunsSource(demo["root"], **NEVER)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        flt = RunFilter(runs=[demo["running"]])
        info_file = resolve_run(demo["root"], demo["running"]).run_info_file
        info = read_json(info_file)
        beat = _dt.datetime.now().astimezone().isoformat()
        info.update(pid=child.pid, host=socket.gethostname(), heartbeat=beat, heartbeat_interval=3600)
        atomic_write_json(info_file, info)
        source.refresher.invalidate()
        assert runs_page(source, flt)["rows"][0]["status"] == "running"
        child.kill()
        child.wait(timeout=30)
        # no file changed and the index is not refreshed: the status is computed per request
        assert runs_page(source, flt)["rows"][0]["status"] == "crashed"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        source.close()


def test_an_applied_action_shows_in_the_next_table_at_once(demo):
    with TestClient(create_app(demo["root"], refresh=NEVER), base_url="http://127.0.0.1:8765") as client:
        where = {"where": "lr == 1e-4", "limit": 50}
        before = [r["index"] for r in client.get("/api/runs", params=where).json()["rows"]]
        target: Optional[str] = before[0]
        body = {"action": "archive", "runs": [target], "confirm": True}
        assert client.post("/api/action", json=body).json()["applied"]
        after = [r["index"] for r in client.get("/api/runs", params=where).json()["rows"]]
        assert target not in after and len(after) == len(before) - 1


def test_the_refresh_runs_in_a_child_process_and_survives_its_death(demo):
    import signal

    source = RunsSource(demo["root"], **NEVER)
    try:
        flt = RunFilter(where="seed == 45")
        assert runs_page(source, flt)["total"] == 0
        pid = source.refresher.worker.pid
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        make_run(demo["root"], task="dqn/CartPole", params={"algo": "dqn", "lr": 1e-4, "seed": 45})
        source.refresher.invalidate()
        assert runs_page(source, flt)["total"] == 1  # refreshed here, the worker restarts next time
        source.refresher.invalidate()
        assert runs_page(source, flt)["total"] == 1
        assert source.refresher.worker.pid not in (None, pid)
    finally:
        source.close()
    assert source.refresher.worker.pid is None  # closed with the source


def test_the_refresh_process_ends_when_the_server_is_killed(demo, tmp_path):
    import signal
    import subprocess
    import sys

    script = (
        "import sys, time\n"
        "from RLA.ui.runs import RunFilter, RunsSource, runs_page\n"
        f"source = RunsSource({str(demo['root'])!r}, period_s=3600.0, stale_s=3600.0, idle_s=3600.0)\n"
        "runs_page(source, RunFilter())\n"
        "print(source.refresher.worker.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(server.stdout.readline())
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        _wait_for(lambda: not _alive(child), "the refresh process outlived the killed server")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "State:\tZ" not in status.read()
    except FileNotFoundError:
        return False
