"""BackgroundSyncer: non-blocking submits, flush on close, errors surfacing on close."""
from __future__ import annotations

import threading

import pytest

from RLA.errors import SyncError, TransportError
from RLA.sync.background import BackgroundSyncer
from RLA.sync.local import LocalTransport
from RLA.sync.syncer import RunSyncer
from sync_helpers import settings, tree

pytestmark = pytest.mark.timeout(60)


def test_submit_returns_at_once_and_close_flushes(make_run, tmp_path) -> None:
    """A slow connection does not block submit(); close() waits for the push."""
    gate = threading.Event()

    def slow_connect():
        gate.wait(10)
        return LocalTransport()

    remote = tmp_path / "remote_db"
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(remote)), tmp_path / "data",
                       connect=slow_connect)
    run = make_run()
    with BackgroundSyncer(syncer) as background:
        for _ in range(5):
            background.submit([run])  # returns while the first push waits on the gate
        assert not remote.exists()
        gate.set()
    assert tree(remote) == tree(tmp_path / "data")
    assert 1 <= len(background.reports) <= 2  # waiting requests were merged


def test_errors_surface_as_warnings_and_on_close(make_run, tmp_path) -> None:
    """A failing push warns (on the caller's thread) and close() raises SyncError."""
    def broken():
        raise TransportError("no route", expected="a route", found="none", fix="plug the cable")

    warnings = []
    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(tmp_path / "r")),
                       tmp_path / "data", connect=broken)
    background = BackgroundSyncer(syncer, warn=warnings.append)
    background.submit([make_run()])
    background.flush(10)
    with pytest.raises(SyncError, match="1 background sync"):
        background.close()
    assert any("no route" in w for w in warnings)
    background.close()  # idempotent
    with pytest.raises(SyncError, match="closed"):
        background.submit([])


def test_close_without_raising_keeps_errors_readable(make_run, tmp_path) -> None:
    """close(raise_errors=False) only reports; the errors stay available."""
    def broken():
        raise TransportError("down", expected="up", found="down", fix="wait")

    syncer = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(tmp_path / "r")),
                       tmp_path / "data", connect=broken)
    background = BackgroundSyncer(syncer)
    background.submit([make_run()])
    background.close(raise_errors=False)
    assert len(background.errors) == 1
