"""What a query pays for the runs written less than a minute ago, and what it still sees.

Runs that are not settled (running, or any file changed in the last minute) are checked on
every query: two ``stat`` calls each (``run.json`` and ``progress.csv``), paths built as
text, no run layout and no decoded record unless something changed (or the run is running).
These tests pin that cost and the promises it must keep: a running run's new row and its end
are seen at once, and so is an ended run's late row.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

import pytest

import RLA.query.live as live
from RLA.query import Catalog, list_runs
from RLA.query.testing import make_run, write_progress


def _count(monkeypatch: pytest.MonkeyPatch, calls: Dict[str, int], name: str) -> None:
    real = getattr(live, name)

    def counted(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return real(*args, **kwargs)

    monkeypatch.setattr(live, name, counted)


def test_an_unsettled_ended_run_costs_two_stats_and_nothing_else(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "data"
    for seed in range(20):
        make_run(root, task="t", params={"seed": seed}, curves={"r": [1.0, 2.0]})
    with Catalog(root) as catalog:
        catalog.refresh()
        assert catalog.conn.execute("SELECT count(*) FROM checks WHERE settled = 0").fetchone()[0] == 20
        calls: Dict[str, int] = {}
        for name in ("_stat_sig", "layout_of", "decode", "signature_and_mtime"):
            _count(monkeypatch, calls, name)
        catalog.refresh()
    assert calls == {"_stat_sig": 40}, calls


def test_an_unchanged_run_without_run_json_is_not_read_again(tmp_path: Path, monkeypatch) -> None:
    import RLA.query.refresh as refresh

    root = tmp_path / "data"
    make_run(root, task="t", params={"a": 1}, curves={"r": [1.0]}, style="original")
    make_run(root, task="t", params={"a": 2}, curves={"r": [1.0]})
    read = []
    real = refresh.read_runs

    def counted(layouts, *args):
        read.extend(layouts)
        return real(layouts, *args)

    monkeypatch.setattr(refresh, "read_runs", counted)
    with Catalog(root) as catalog:
        catalog.refresh()
        assert len(read) == 2
        catalog.refresh()
        catalog.refresh()
    assert len(read) == 2, "an unchanged unsettled run was read again"


def test_a_running_run_that_ends_without_a_new_row_is_seen_ended_at_once(tmp_path: Path) -> None:
    root = tmp_path / "data"
    run = make_run(root, task="t", params={"a": 1}, curves={"r": [1.0]}, status="running")
    assert list(list_runs(root)["status"]) == ["running"]
    info_path = run.log_dir / "run.json"
    info = json.loads(info_path.read_text())
    info.update(status="finished", end_time=info["start_time"])
    info_path.write_text(json.dumps(info))  # in place, progress.csv untouched
    assert list(list_runs(root)["status"]) == ["finished"]


def test_an_ended_runs_late_row_is_seen_at_once(tmp_path: Path) -> None:
    root = tmp_path / "data"
    run = make_run(root, task="t", params={"a": 1}, curves={"r": [1.0]})
    assert list(list_runs(root)["n_rows"]) == [1]
    write_progress(run.log_dir / "progress.csv", {"r": [1.0, 5.0]})  # rows of a copy still arriving
    frame = list_runs(root)
    assert list(frame["n_rows"]) == [2] and list(frame["last(r)"]) == [5.0]


def test_a_run_whose_run_json_vanished_is_checked_from_its_other_sources(tmp_path: Path) -> None:
    root = tmp_path / "data"
    run = make_run(root, task="t", params={"a": 1}, curves={"r": [1.0]})
    assert list(list_runs(root)["status"]) == ["finished"]
    os.unlink(run.log_dir / "run.json")  # now a run without run.json: parameter.json speaks
    frame = list_runs(root)
    assert list(frame["status"]) == ["unknown"] and list(frame["param_source"]) == ["parameter.json"]
