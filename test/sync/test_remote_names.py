"""Each layer that keeps a server's names inside the data root, checked on its own."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List

import pytest

from RLA.errors import UnsafePathError
from RLA.layout import RunLayout
from RLA.safe_paths import makedirs_inside
from RLA.sync.base import MAX_WALK_DEPTH, RemoteEntry
from RLA.sync.local import LocalTransport
from RLA.sync.remote_names import check_key, check_run, is_day, local_destination
from sync_helpers import RUN_NAMES

GOOD = RUN_NAMES[0]
HOSTILE = ["..", ".", "", "a/b", "/abs", "x\n", "x\x00", "x\x1b", "x\x7f", "\\evil", "a" * 256]


@pytest.mark.parametrize("name", HOSTILE + ["10-00-00-000001_&a=/../../x", "notarun", ".10-00-00-000001"])
def test_run_names_outside_the_layout_are_refused(name: str) -> None:
    with pytest.raises(UnsafePathError):
        check_run("task", "2026/03/04", name)


@pytest.mark.parametrize("task", ["../x", "/abs", "a//b", "a/../../b", "a\nb", ".hidden", "a/.b"])
def test_hostile_tasks_are_refused(task: str) -> None:
    with pytest.raises(UnsafePathError):
        check_run(task, "2026/03/04", GOOD)


@pytest.mark.parametrize("date", ["2026/3/04", "\uff12\uff10\uff12\uff16/03/04", "2026/03/04/05", "2026/03",
                                  "20x6/03/04", "2026/0\u0663/04"])
def test_dates_must_be_ascii_digits_of_the_layout(date: str) -> None:
    with pytest.raises(UnsafePathError):
        check_run("task", date, GOOD)


def test_is_day_wants_a_task_and_ascii_digits() -> None:
    assert is_day(["t", "2026", "03", "04"]) and is_day(["a", "b", "2026", "03", "04"])
    assert not is_day(["2026", "03", "04"]) and not is_day(["t", "\uff12\uff10\uff12\uff16", "03", "04"])


@pytest.mark.parametrize("key", ["log/../x", "log//x", "log/a/../../b", "unknown/x", "archive_tester/x", "log/x\n",
                                 "log//abs"])
def test_hostile_keys_are_refused(key: str) -> None:
    with pytest.raises(UnsafePathError):
        check_key(key)


def test_good_places_pass() -> None:
    assert check_run("demo/sub", "2026/03/04", GOOD) == ("demo/sub", "2026/03/04", GOOD)
    assert check_key("log/tb/events.out.tfevents.1.host") == ("log", ("tb", "events.out.tfevents.1.host"))
    assert check_key("archive_tester") == ("archive_tester", ())


def test_destination_through_a_local_link_is_refused(tmp_path: Path) -> None:
    """The names pass, but data_root/log/task is a link to a folder elsewhere: refused."""
    root = tmp_path / "data"
    (root / "log").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "log" / "task")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        local_destination(RunLayout(root, "task", "2026/03/04", GOOD), "log/progress.csv")
    assert local_destination(RunLayout(root, "other", "2026/03/04", GOOD), "log/progress.csv") == \
        root / "log" / "other" / "2026/03/04" / GOOD / "progress.csv"


def test_makedirs_inside_creates_plain_folders_and_refuses_links_files_and_dots(tmp_path: Path) -> None:
    root = tmp_path / "data"
    assert makedirs_inside(root, root / "a" / "b").is_dir()
    os.symlink(tmp_path, root / "link")
    (root / "file").write_text("x")
    for bad in (root / "link" / "x", root / "file" / "x", root / "a" / ".." / ".." / "out"):
        with pytest.raises(UnsafePathError):
            makedirs_inside(root, bad)
    assert not (tmp_path / "x").exists() and not (tmp_path / "out").exists()


class _Listing(LocalTransport):
    """A transport whose listings are given: every folder lists ``entries``, whatever its path."""

    def __init__(self, entries: Dict[str, List[RemoteEntry]]) -> None:
        super().__init__()
        self.entries, self.listed = entries, []

    def listdir(self, rpath: str) -> List[RemoteEntry]:
        self.listed.append(rpath)
        return self.entries.get(rpath, self.entries.get("*", []))


def test_walk_follows_only_plain_names_and_no_link() -> None:
    """``..``, ``a/b``, control characters and links are reported, never entered or yielded as files."""
    transport = _Listing({"/r": [RemoteEntry("..", True), RemoteEntry("a/b", True), RemoteEntry("x\n", False),
                                 RemoteEntry("link", True, is_link=True), RemoteEntry("ok", False, 3)]})
    refused: List[str] = []
    files = dict(transport.walk("/r", refuse=lambda rel, why: refused.append(rel)))
    assert set(files) == {"ok", "link"} and files["link"].is_link
    assert transport.listed == ["/r"]
    assert sorted(refused) == ["a/b", "x\n"]


def test_walk_of_an_endless_tree_stops() -> None:
    """A server that lists a sub-folder in every folder cannot keep the walk going."""
    transport = _Listing({"*": [RemoteEntry("deeper", True)]})
    refused: List[str] = []
    assert list(transport.walk("/r", refuse=lambda rel, why: refused.append(rel))) == []
    assert len(transport.listed) == MAX_WALK_DEPTH and len(refused) == 1
