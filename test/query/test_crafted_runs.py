"""Crafted or damaged runs (a pull can bring any) are skipped and reported; the rest is listed."""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from RLA.layout import INDEX_DB
from RLA.query import BrokenRunWarning, list_runs, load_curves, select_runs
from RLA.query.testing import CRAFTED, make_crafted_runs, make_run


def finishes(fn: Callable[[], Any], seconds: float = 60.0) -> Any:
    """Run ``fn`` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for {seconds} s (a FIFO opened for reading?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def crafted(tmp_path: Path):
    root = tmp_path / "data"
    root.mkdir()
    good, bad = make_crafted_runs(root)
    return root, good, bad


def _check_report(frame: Any, good: list, bad: dict) -> None:
    assert sorted(frame["index"]) == sorted(run.index for run in good)
    skipped = dict(frame.attrs["skipped"])
    for name, layout in bad.items():
        assert layout.index in skipped, name
        assert CRAFTED[name][1] in skipped[layout.index], (name, skipped[layout.index])


@pytest.mark.timeout(120)
def test_list_runs_lists_every_good_run_and_reports_each_crafted_one(crafted):
    root, good, bad = crafted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = finishes(lambda: list_runs(root))
    _check_report(frame, good, bad)
    messages = [str(w.message) for w in caught if issubclass(w.category, BrokenRunWarning)]
    assert len(messages) == len(bad)
    assert all(any(layout.index in m for m in messages) for layout in bad.values())


@pytest.mark.timeout(120)
def test_where_filters_the_good_runs_and_reports_the_crafted_ones(crafted):
    root, good, bad = crafted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        frame = finishes(lambda: list_runs(root, where="seed >= 1 and last('return') > 0"))
    assert sorted(frame["index"]) == sorted(run.index for run in good[1:])
    assert {index for index, _ in frame.attrs["skipped"]} == {layout.index for layout in bad.values()}


@pytest.mark.timeout(120)
def test_a_second_query_from_the_warm_cache_and_the_index_file_reports_them_again(crafted):
    root, good, bad = crafted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        finishes(lambda: list_runs(root))
        again = finishes(lambda: list_runs(root))
    _check_report(again, good, bad)
    with sqlite3.connect(root / INDEX_DB) as conn:
        keys = {key for (key,) in conn.execute("SELECT key FROM runs")}
    assert keys == {run.relative for run in good}  # damaged runs are never cached


@pytest.mark.timeout(120)
def test_include_broken_lists_them_with_the_bad_fields_dropped(crafted):
    root, good, bad = crafted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        frame = finishes(lambda: list_runs(root, include_broken=True))
    assert len(frame) == len(good) + len(bad)
    row = frame[frame["index"] == bad["pid_2_70"].index].iloc[0]
    assert row["status"] in ("running", "crashed")  # status still derived without the pid


@pytest.mark.timeout(120)
def test_load_curves_skips_and_reports_runs_whose_progress_cannot_be_read(crafted):
    root, good, bad = crafted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        frame = finishes(lambda: list_runs(root, include_broken=True))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curves = finishes(lambda: load_curves(frame, ["return"]))
    unreadable = {bad[name].index for name in CRAFTED if name.startswith("progress_")}
    assert {index for index, _ in curves.attrs["skipped"]} == unreadable
    assert set(curves["index"]).isdisjoint(unreadable)
    assert {run.index for run in good} <= set(curves["index"])
    assert sum(issubclass(w.category, BrokenRunWarning) for w in caught) == len(unreadable)


@pytest.mark.timeout(120)
def test_a_repaired_run_is_read_again_whichever_file_was_fixed(tmp_path):
    root = tmp_path / "data"
    good, bad = make_crafted_runs(root, names=["parameter_json_100k_deep", "progress_fifo", "heartbeat_int"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        assert len(list_runs(root)) == len(good)
        # parameter.json is not part of the run's file signature: a damaged run must be re-read anyway
        (bad["parameter_json_100k_deep"].code_dir / "parameter.json").write_text(json.dumps({"kind": "fixed"}))
        fifo = bad["progress_fifo"].log_dir / "progress.csv"
        os.unlink(fifo)
        fifo.write_text("return,time-step\n1.0,0\n")
        info_path = bad["heartbeat_int"].log_dir / "run.json"
        info = json.loads(info_path.read_text())
        info["heartbeat"] = info["start_time"]
        info_path.write_text(json.dumps(info))
        frame = list_runs(root)
    assert len(frame) == len(good) + 3 and frame.attrs["skipped"] == []


@pytest.mark.timeout(60)
def test_a_record_cached_by_an_older_version_is_not_trusted(tmp_path):
    root = tmp_path / "data"
    make_run(root, params={"a": 1}, curves={"r": [1.0]})
    assert len(list_runs(root)) == 1
    with sqlite3.connect(root / INDEX_DB) as conn:  # an unchecked record, as an older index kept it
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
        conn.execute("UPDATE runs SET record = json_set(record, '$.info.status', 'running', '$.info.heartbeat', 5)")
    from RLA.query import WARM
    WARM.reset()
    frame = list_runs(root)
    assert list(frame["status"]) == ["finished"]  # the file was rebuilt from the tree


@pytest.mark.timeout(60)
def test_a_run_that_only_crashes_the_reader_is_reported_not_raised(tmp_path, monkeypatch):
    root = tmp_path / "data"
    make_run(root, params={"a": 1}, curves={"r": [1.0]})
    bad = make_run(root, params={"a": 2}, curves={"r": [1.0]})
    import RLA.query.records as records

    original = records.summarize_progress

    def explode(path: Path, record: Any) -> None:
        if bad.relative in os.fspath(path):
            raise TypeError("unexpected")
        original(path, record)

    monkeypatch.setattr(records, "summarize_progress", explode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        frame = list_runs(root)
    assert len(frame) == 1 and "TypeError" in dict(frame.attrs["skipped"])[bad.index]


@pytest.mark.timeout(60)
def test_a_repair_outside_the_files_signature_is_seen_by_memory_and_index_file(tmp_path):
    root = tmp_path / "data"
    layout = make_run(root, params={"kind": "x"}, curves={"r": [1.0]})
    info_path = layout.log_dir / "run.json"
    info = json.loads(info_path.read_text())
    del info["hyper_params"]  # hyper-parameters then come from parameter.json (not in the signature)
    info_path.write_text(json.dumps(info))
    params = layout.code_dir / "parameter.json"
    params.write_text("[" * 1000 + "]" * 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        assert len(list_runs(root)) == 0
        assert len(list_runs(root)) == 0  # the answer of the warm process
        params.write_text(json.dumps({"kind": "fixed"}))
        assert list(list_runs(root)["kind"]) == ["fixed"]  # same process
    other = tmp_path / "other"  # the same again, seen by a new process through the index file
    layout2 = make_run(other, params={"kind": "x"}, curves={"r": [1.0]})
    (layout2.log_dir / "run.json").write_text(json.dumps(info))
    (layout2.code_dir / "parameter.json").write_text("[" * 1000 + "]" * 1000)
    from RLA.query import WARM
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BrokenRunWarning)
        assert len(list_runs(other)) == 0
        WARM.reset()
        (layout2.code_dir / "parameter.json").write_text(json.dumps({"kind": "fixed"}))
        assert list(list_runs(other)["kind"]) == ["fixed"]
