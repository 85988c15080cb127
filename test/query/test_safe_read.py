"""The one reader of files from outside: regular files only, bounded size, bounded JSON depth."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from RLA.query.info_schema import check_info
from RLA.safe_read import (UnreadableFileError, nesting_depth, read_bytes, read_json, read_json_object,
                           read_prefix)


@pytest.mark.timeout(30)
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "progress.csv"
    os.mkfifo(fifo)  # no writer: a plain open() for reading would block forever
    with pytest.raises(UnreadableFileError, match="FIFO"):
        read_bytes(fifo, 1 << 20)
    with pytest.raises(UnreadableFileError, match="FIFO"):
        read_prefix(fifo, 10)


@pytest.mark.parametrize("make, reason", [
    (lambda p: p.mkdir(), "directory"),
    (lambda p: p.symlink_to("/etc/passwd"), "symbolic link"),
    (lambda p: p.symlink_to("/dev/zero"), "symbolic link"),
])
def test_non_regular_files_and_links_are_refused(tmp_path, make, reason):
    path = tmp_path / "run.json"
    make(path)
    with pytest.raises(UnreadableFileError, match=reason):
        read_bytes(path, 1 << 20)


def test_a_device_is_refused():
    with pytest.raises(UnreadableFileError, match="character device"):
        read_bytes("/dev/zero", 1 << 20)


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "nope", 10)


def test_the_size_cap_is_enforced(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 1001)
    with pytest.raises(UnreadableFileError, match="1001 bytes"):
        read_bytes(path, 1000)
    assert read_bytes(path, 1001) == b" " * 1001


@pytest.mark.parametrize("depth", [65, 100_000])
def test_json_deeper_than_the_limit_is_refused_before_parsing(tmp_path, depth):
    path = tmp_path / "run.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(UnreadableFileError, match="nested more than 64"):
        read_json(path)


def test_json_at_the_limit_and_brackets_in_strings_are_fine(tmp_path):
    path = tmp_path / "run.json"
    path.write_text("[" * 64 + "]" * 64)
    assert read_json(path) is not None
    path.write_text(json.dumps({"text": "[" * 500 + "{" * 500 + '\\"[['}))
    assert read_json_object(path)["text"].startswith("[[")
    text = json.dumps({"a": [{"b": ["]]]]"]}], "c": "[[[[[[[[[["}).encode()
    assert nesting_depth(text, 3) == 4 and nesting_depth(text, 1) == 2  # counts to limit + 1


@pytest.mark.parametrize("content, reason", [
    (b'{"pid": ' + b"9" * 5000 + b"}", "not valid JSON"),
    (b"\x00\x01\x02", "binary"),
    (b'{"a": "\xff\xfe"}', "binary"),
    (b"[1, 2]", "expected a JSON object"),
    (b"{not json", "not valid JSON"),
])
def test_unparseable_json_is_one_error_type(tmp_path, content, reason):
    path = tmp_path / "run.json"
    path.write_bytes(content)
    with pytest.raises(UnreadableFileError, match=reason):
        read_json_object(path)


@pytest.mark.parametrize("field, value", [
    ("heartbeat", 5), ("heartbeat", "soon"), ("start_time", 5), ("end_time", [1]),
    ("heartbeat_interval", "soon"), ("heartbeat_interval", -1), ("heartbeat_interval", float("inf")),
    ("heartbeat_interval", True), ("pid", 2 ** 70), ("pid", 0), ("pid", "12"), ("pid", True),
    ("status", 3), ("status", "exploded"), ("exit_code", "x"), ("host", 5), ("parent", {"a": 1}),
    ("hyper_params", [1]), ("tracked_keys", "lr"), ("tracked_keys", [1]), ("git", "main"),
    ("start_time", "0001-01-01T00:00:00+23:59"), ("heartbeat", "x" * 100),
])
def test_each_wrong_typed_run_json_field_is_a_named_problem_and_dropped(field, value):
    info = {"status": "running", "start_time": "2026-11-01T10:00:00+00:00", "pid": 12, field: value}
    clean, problems = check_info(info)
    assert field not in clean and len(problems) == 1 and repr(field) in problems[0]


def test_what_the_writer_produces_passes_unchanged():
    info = {"status": "finished", "start_time": "2026-11-01T10:00:00.123456+01:00", "end_time": None,
            "heartbeat": "2026-11-01T10:00:30.000001+01:00", "heartbeat_interval": 30.0, "pid": 4_194_304,
            "exit_code": 0, "host": "h", "ip": "1.2.3.4", "parent": None, "command": ["train.py", "--lr", "1"],
            "hyper_params": {"lr": 1e-3}, "tracked_keys": ["lr"], "git": None, "error": None}
    clean, problems = check_info(info)
    assert clean is info and problems == []
