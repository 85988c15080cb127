"""Run names, indexes and the on-disk layout."""
from __future__ import annotations

import datetime as dt

import pytest

from RLA.errors import RunNotFoundError
from RLA.layout import RunLayout, find_run, find_runs, iter_run_dirs
from RLA.naming import cap_name, format_run_name, parse_run_name, sanitize_value

WHEN = dt.datetime(2026, 11, 22, 14, 5, 6, 7)


def test_name_has_time_ip_and_tracked_params_in_order():
    name = format_run_name(WHEN, "10.0.0.1", [("env", "Hopper-v4"), ("lr", 0.001)])
    assert name == "14-05-06-000007_10.0.0.1_&env=Hopper-v4&lr=0.001"


def test_name_without_tracked_params_ends_with_ampersand():
    assert format_run_name(WHEN, "noip", []).endswith("_noip_&")


@pytest.mark.parametrize("value, shown", [
    ([64, 64], "{64, 64}"),
    ((1, 2), "{1, 2}"),
    ("a/b", "a_b"),
    ("x*y?z", "x_y_z"),
    ("p&q", "p_q"),
    ("line\nbreak", "line_break"),
])
def test_values_are_sanitised_for_paths(value, shown):
    assert sanitize_value(value) == shown


def test_long_names_are_cut_to_250_bytes_with_a_hash():
    long = format_run_name(WHEN, "1.2.3.4", [("note", "é" * 300)])
    assert len(long.encode()) <= 250
    other = format_run_name(WHEN, "1.2.3.4", [("note", "é" * 299 + "x")])
    assert long != other  # the hash keeps distinct values distinct
    assert cap_name("short") == "short"


def test_parse_current_and_legacy_names():
    current = parse_run_name("21-13-03-230208_11.0.91.89_&env_id=Test-v1&lr=0.0001")
    legacy = parse_run_name("21-13-03-230208 11.0.91.89 &env_id=Test-v1&learning_rate=0.0001")
    assert current.params == [("env_id", "Test-v1"), ("lr", "0.0001")] and not current.legacy
    assert legacy.legacy and legacy.ip == "11.0.91.89" and legacy.params[1] == ("learning_rate", "0.0001")
    assert parse_run_name("not-a-run") is None


def make_dirs(root, kind, task, name, date="2026/11/22"):
    path = root / kind / task / date / name
    path.mkdir(parents=True)
    return path


def test_layout_paths_share_the_relative_part(tmp_path):
    layout = RunLayout(tmp_path, "demo", "2026/11/22", "14-05-06-000007_1.2.3.4_&a=1")
    assert layout.index == "demo/2026/11/22/14-05-06-000007"
    assert layout.record_date == "2026/11/22/14-05-06-000007"
    assert layout.log_dir == tmp_path / "log/demo/2026/11/22/14-05-06-000007_1.2.3.4_&a=1"
    assert layout.archive_tester_file.name.endswith("&a=1.json")
    assert layout.moved(archived=True).log_dir == tmp_path / "arc/log/demo/2026/11/22" / layout.name
    assert RunLayout.from_path(tmp_path, layout.code_dir) == layout


def test_iter_and_find_runs_including_legacy_and_nested_tasks(tmp_path):
    make_dirs(tmp_path, "log", "demo", "10-00-00-000001_1.2.3.4_&lr=0.1")
    make_dirs(tmp_path, "log", "demo", "10-00-00-000002 1.2.3.4 &lr=0.2")
    make_dirs(tmp_path, "log", "group/sub", "11-00-00-000003_1.2.3.4_&lr=0.3")
    make_dirs(tmp_path, "log", "demo", "not_a_run")
    runs = list(iter_run_dirs(tmp_path))
    assert sorted(r.task for r in runs) == ["demo", "demo", "group/sub"]
    assert find_run(tmp_path, "demo/2026/11/22/10-00-00-000002").name.startswith("10-00-00-000002 ")
    assert find_run(tmp_path, "2026/11/22/11").task == "group/sub"
    assert len(find_runs(tmp_path, "*lr=0.[12]*", task="demo")) == 2


def test_find_run_reports_missing_and_ambiguous(tmp_path):
    make_dirs(tmp_path, "log", "demo", "10-00-00-000001_1.2.3.4_&lr=0.1")
    make_dirs(tmp_path, "log", "demo", "10-00-00-000002_1.2.3.4_&lr=0.2")
    with pytest.raises(RunNotFoundError, match="No run matches"):
        find_run(tmp_path, "2025/01/01")
    with pytest.raises(RunNotFoundError, match="2 runs match"):
        find_run(tmp_path, "2026/11/22/10")


def test_run_with_only_a_checkpoint_is_found(tmp_path):
    make_dirs(tmp_path, "checkpoint", "demo", "10-00-00-000001_1.2.3.4_&lr=0.1")
    assert find_run(tmp_path, "demo/2026/11/22/10-00-00-000001").task == "demo"


def test_find_run_accepts_a_prefix_that_names_the_task(tmp_path):
    make_dirs(tmp_path, "log", "demo", "10-00-00-000001_1.2.3.4_&lr=0.1")
    make_dirs(tmp_path, "log", "other", "10-00-00-000002_1.2.3.4_&lr=0.2")
    assert find_run(tmp_path, "demo/2026").task == "demo"
    assert find_run(tmp_path, "other/2026/11/22/10*").task == "other"


def test_atomic_writes_get_the_usual_permissions(tmp_path):
    import os
    import stat

    from RLA.fs import atomic_write_json

    atomic_write_json(tmp_path / "x.json", {"a": 1})
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(tmp_path / "x.json").st_mode) == 0o666 & ~mask
