"""A run folder swapped for a link between push's walk and its read does not make push send the link's target.

The walk lists a run's files with ``lstat`` and opens each later with ``O_NOFOLLOW``, which
guards only the last component: someone who can write in a shared data root could swap the
run's log folder for a link to a folder of the pushing user's (``~/.ssh``) in between, and
push sent the file of that name from there. Each opened file must be the file the walk
listed (same device and inode). The swap is made deterministic inside ``os.open``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from RLA.errors import SyncError
from RLA.sync.syncer import RunSyncer
from sync_helpers import RUN_NAMES, settings

pytestmark = pytest.mark.timeout(60)
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- not for the main node\n"


@pytest.mark.parametrize("target", ["progress.csv", "log.txt"])
def test_push_never_sends_a_file_reached_through_a_swapped_folder(make_run, tmp_path: Path, monkeypatch,
                                                                 target: str) -> None:
    run = make_run(RUN_NAMES[0])
    outside = tmp_path / "home_ssh"
    outside.mkdir()
    (outside / target).write_bytes(SECRET * 4000)  # larger than the listed file: its size check passes
    main_db = tmp_path / "main_db"
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(main_db)), tmp_path / "data")
    if target == "log.txt":  # a second push appends: the tail read goes through the same open
        syncer.push([run])
        with open(run.log_dir / "log.txt", "ab") as handle:
            handle.write(b"more\n")
    real_open, swapped = os.open, []

    def swapping_open(path, flags, *args, **kwargs):
        if not swapped and os.fsdecode(path) == str(run.log_dir / target):
            swapped.append(True)
            os.rename(run.log_dir, run.log_dir.with_name(f".{run.log_dir.name}.moved"))
            os.symlink(outside, run.log_dir)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)
    try:
        syncer.push([run])
    except SyncError:
        pass  # refusing the whole push is fine; sending the secret is not
    monkeypatch.undo()
    assert swapped
    for path in main_db.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_bytes(), path
