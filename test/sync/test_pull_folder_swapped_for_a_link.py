"""A local folder replaced by a link between pull's checks and its write does not redirect the write.

Someone who can write in the data root (a shared database) swaps a run folder for a link to
a folder outside at the worst moment: after pull checked the destination, before it created
the temporary file (or opened the log to append). With path-based calls the file then lands
outside the data root. Pull writes through a descriptor of the checked folder (``openat``),
so it lands in the real folder, wherever that was moved. The swap is made deterministic by
doing it inside ``os.open`` for the one file the attack targets.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from RLA.sync.syncer import RunSyncer
from sync_helpers import RUN_NAMES, TASK, settings

pytestmark = pytest.mark.timeout(60)
DAY = f"{TASK}/2026/03/04"


def _swap_inside_open(monkeypatch: pytest.MonkeyPatch, target: str, run_dir: Path, outside: Path) -> Callable:
    """Patch ``os.open``: the first open of a file named ``target`` first swaps ``run_dir`` for a link."""
    real_open = os.open
    done = []

    def swapping_open(path, flags, *args, **kwargs):
        if not done and os.path.basename(os.fsdecode(path)) == target:
            done.append(True)
            os.rename(run_dir, run_dir.with_name(f".{run_dir.name}.moved"))
            os.symlink(outside, run_dir)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)
    return lambda: bool(done)


@pytest.fixture
def setup(make_run, tmp_path: Path):
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    outside = tmp_path / "outside"
    outside.mkdir()
    local_dir = tmp_path / "pulled" / "log" / DAY / RUN_NAMES[0]
    remote = settings(file_transfer_protocol="local", remote_data_root=str(server))
    return server, run, outside, local_dir, remote


def test_a_download_never_lands_in_the_link_target(setup, monkeypatch, tmp_path: Path) -> None:
    server, _run, outside, local_dir, remote = setup
    local_dir.mkdir(parents=True)
    swapped = _swap_inside_open(monkeypatch, ".progress.csv.rla-part", local_dir, outside)
    RunSyncer(remote, tmp_path / "pulled").pull()
    monkeypatch.undo()
    assert swapped()
    assert list(outside.iterdir()) == []
    moved = local_dir.with_name(f".{local_dir.name}.moved")
    assert (moved / "progress.csv").read_bytes() == (server / "log" / DAY / RUN_NAMES[0] / "progress.csv").read_bytes()


def test_an_appended_tail_never_lands_in_the_link_target(setup, monkeypatch, tmp_path: Path) -> None:
    server, run, outside, local_dir, remote = setup
    RunSyncer(remote, tmp_path / "pulled").pull()
    victim = outside / "log.txt"
    shutil.copyfile(local_dir / "log.txt", victim)  # the same prefix: a path-based append would accept it
    before = victim.read_bytes()
    with open(run.log_dir / "log.txt", "ab") as handle:
        handle.write(b"appended on the main node\n")
    os.utime(run.log_dir / "log.txt", (2e9, 2e9))
    swapped = _swap_inside_open(monkeypatch, "log.txt", local_dir, outside)
    report = RunSyncer(remote, tmp_path / "pulled").pull()
    monkeypatch.undo()
    assert swapped() and report.files_fetched == 1
    assert victim.read_bytes() == before and sorted(p.name for p in outside.iterdir()) == ["log.txt"]
    moved = local_dir.with_name(f".{local_dir.name}.moved")
    assert (moved / "log.txt").read_bytes() == (run.log_dir / "log.txt").read_bytes()
