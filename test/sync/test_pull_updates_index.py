"""A pull that grows a settled local run in place is seen by the next query, without --verify."""
from __future__ import annotations

import datetime as dt

import pytest

from RLA.query import list_runs
from RLA.query.testing import age_tree, make_run, write_progress
from RLA.sync.syncer import RunSyncer

from sync_helpers import settings


@pytest.mark.timeout(120)
def test_a_pull_into_a_settled_run_is_seen_by_the_next_query(tmp_path):
    remote, local = tmp_path / "remote", tmp_path / "local"
    remote.mkdir()
    local.mkdir()
    layout = make_run(remote, task="demo", params={"seed": 0}, curves={"return": [1.0, 2.0]},
                      when=dt.datetime(2026, 11, 1, 10, 0, 0), status="finished")
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(remote)), local)
    syncer.pull()
    age_tree(local)
    assert list_runs(local)["last(return)"].tolist() == [2.0]
    age_tree(local)  # settled, and its listings trusted: a plain query no longer stats its files
    assert list_runs(local)["last(return)"].tolist() == [2.0]

    write_progress(layout.log_dir / "progress.csv", {"return": [1.0, 2.0, 3.0]}, [0, 1, 2])
    syncer.pull()
    assert list_runs(local)["last(return)"].tolist() == [3.0]
