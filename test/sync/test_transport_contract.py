"""One contract every transport (local, ftp, sftp, s3) passes: primitives and whole-run sync."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from RLA.sync import WriteResult, open_transport
from RLA.sync.syncer import RunSyncer
from sync_helpers import RUN_NAMES, Target, tree

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["local", "ftp", "sftp", "s3"])
def target(request: pytest.FixtureRequest, target_factory) -> Target:
    """Every transport in turn, the object store (moto's S3 server) included."""
    return target_factory(request.param)


def _rooted(target: Target, rel: str) -> str:
    return f"{target.settings.remote_data_root.rstrip('/')}/{rel}"


def test_primitives_round_trip(target: Target) -> None:
    """makedirs, write, stat, read, write at an offset, rename over a file, list, remove."""
    with open_transport(target.settings) as t:
        t.makedirs(_rooted(target, "a/b"))
        t.makedirs(_rooted(target, "a/b"))  # existing directories are fine
        path = _rooted(target, "a/b/f.bin")
        assert t.stat(path) is None
        assert t.write(path, io.BytesIO(b"hello world"), 0, 5) == WriteResult(5, 5)
        assert t.stat(path).size == 5
        assert t.write(path, io.BytesIO(b" there"), 5, 6, expect_size=4) == WriteResult(0, 5)  # refused
        assert t.write(path, io.BytesIO(b" there"), 5, 6, mtime=1_600_000_000, expect_size=5) == WriteResult(6, 11)
        assert abs(t.stat(path).mtime - 1_600_000_000) < 2
        sink = io.BytesIO()
        assert t.read(path, sink, 0) == 11 and sink.getvalue() == b"hello there"
        tail = io.BytesIO()
        t.read(path, tail, 6)
        assert tail.getvalue() == b"there"
        other = _rooted(target, "a/b/g.bin")
        t.write(other, io.BytesIO(b"new"), 0, 3)
        t.rename(other, path)
        assert t.stat(path).size == 3 and t.stat(other) is None
        t.set_mtime(path, 1_700_000_000)
        assert abs(t.stat(path).mtime - 1_700_000_000) < 2
        names = {e.name: e.is_dir for e in t.listdir(_rooted(target, "a"))}
        assert names == {"b": True}
        assert dict((k, e.size) for k, e in t.walk(_rooted(target, "a"))) == {"b/f.bin": 3}
        t.remove(path)
        t.remove(path)  # removing a missing file is fine
        assert t.listdir(_rooted(target, "a/b")) == []
        assert t.listdir(_rooted(target, "missing")) == []


def test_reading_a_missing_file_is_a_remote_file_error(target: Target) -> None:
    """One file gone since it was listed is a RemoteFileError naming it (the pull skips it and
    goes on), not a failed session; the session still works after it."""
    from RLA.sync.base import RemoteFileError

    with open_transport(target.settings) as t:
        t.makedirs(_rooted(target, "d"))
        with pytest.raises(RemoteFileError, match="gone.bin"):
            t.read(_rooted(target, "d/gone.bin"), io.BytesIO(), 0)
        t.write(_rooted(target, "d/here.bin"), io.BytesIO(b"ok"), 0, 2)
        assert t.stat(_rooted(target, "d/here.bin")).size == 2


def test_close_is_idempotent(target: Target) -> None:
    """A transport closes once; a second close does nothing."""
    transport = open_transport(target.settings)
    transport.close()
    transport.close()
    assert transport.closed


def test_push_makes_remote_byte_identical(target: Target, make_run, tmp_path: Path) -> None:
    """Every synced data type arrives with the local layout; checkpoints stay home by default."""
    runs = [make_run(name) for name in RUN_NAMES]
    report = RunSyncer(target.settings, tmp_path / "data").push(runs)
    assert report.runs == 2 and report.files_sent == 2 * 8
    assert tree(target.root_on_disk) == tree(tmp_path / "data")
    assert not (target.root_on_disk / "checkpoint").exists()


def test_unchanged_push_sends_nothing_and_does_not_connect(target: Target, make_run, tmp_path: Path) -> None:
    """A second push of unchanged runs needs no connection at all."""
    run = make_run()
    RunSyncer(target.settings, tmp_path / "data").push([run])

    def refuse():
        raise AssertionError("connected although nothing changed")

    report = RunSyncer(target.settings, tmp_path / "data", connect=refuse).push([run])
    assert report.runs_changed == 0 and report.bytes_sent == 0


def test_append_sends_only_new_bytes(target: Target, make_run, tmp_path: Path) -> None:
    """Growing logs send exactly the appended bytes and end identical."""
    run = make_run()
    syncer = RunSyncer(target.settings, tmp_path / "data")
    syncer.push([run])
    added = 0
    for rel in ("progress.csv", "log.txt", "tb/events.out.tfevents.1.host"):
        with open(run.log_dir / rel, "ab") as handle:
            chunk = os.urandom(300) if rel.startswith("tb") else b"more,1.0\n" * 30
            handle.write(chunk)
            added += len(chunk)
    report = syncer.push([run])
    assert report.files_appended == 3 and report.files_sent == 0
    assert report.bytes_sent == added
    assert tree(target.root_on_disk) == tree(tmp_path / "data")


def test_rewritten_append_only_file_is_sent_whole(target: Target, make_run, tmp_path: Path) -> None:
    """A progress.csv rewritten with a new column (prefix changed) is replaced, not appended to."""
    run = make_run()
    syncer = RunSyncer(target.settings, tmp_path / "data")
    syncer.push([run])
    csv = run.log_dir / "progress.csv"
    rows = csv.read_bytes().splitlines()
    csv.write_bytes(b"\n".join([rows[0] + b",loss"] + [r + b"," for r in rows[1:]] + [b"9,0.5,0.1\n"]))
    report = syncer.push([run])
    assert report.files_sent == 1 and report.files_appended == 0
    assert tree(target.root_on_disk) == tree(tmp_path / "data")


def test_local_deletion_is_mirrored(target: Target, make_run, tmp_path: Path) -> None:
    """A file pushed before and deleted locally is removed from the main node."""
    run = make_run()
    syncer = RunSyncer(target.settings, tmp_path / "data")
    syncer.push([run])
    (run.results_dir / "0-curve.png").unlink()
    assert syncer.push([run]).files_deleted == 1
    assert tree(target.root_on_disk) == tree(tmp_path / "data")


def test_pull_round_trip_and_time_filter(target: Target, make_run, tmp_path: Path) -> None:
    """Pull downloads the selected runs byte for byte; --since/--until select by start time."""
    make_run(RUN_NAMES[0], date="2026/03/04")
    make_run(RUN_NAMES[1], date="2026/05/06")
    RunSyncer(target.settings, tmp_path / "data").push(
        [r for r in __import__("RLA.layout", fromlist=["x"]).iter_run_dirs(tmp_path / "data")])
    only_may = RunSyncer(target.settings, tmp_path / "pulled_may").pull(since="2026/05/01")
    assert only_may.runs == 1
    assert all("2026/05/06" in p for p in tree(tmp_path / "pulled_may"))
    everything = tmp_path / "pulled_all"
    report = RunSyncer(target.settings, everything).pull()
    assert report.runs == 2
    assert tree(everything) == tree(target.root_on_disk)
    again = RunSyncer(target.settings, everything).pull()
    assert again.runs_changed == 0 and again.bytes_received == 0


def test_pull_fetches_only_the_new_tail(target: Target, make_run, tmp_path: Path) -> None:
    """A pulled log that grew on the main node is completed by fetching its tail."""
    run = make_run()
    syncer = RunSyncer(target.settings, tmp_path / "data")
    syncer.push([run])
    puller = RunSyncer(target.settings, tmp_path / "pulled")
    puller.pull()
    with open(run.log_dir / "log.txt", "ab") as handle:
        handle.write(b"tail line\n" * 50)
    syncer.push([run])
    report = puller.pull()
    assert report.files_fetched == 1 and report.files_received == 0
    assert report.bytes_received <= 500 + 4096  # the tail plus the overlap check
    assert tree(tmp_path / "pulled") == tree(target.root_on_disk)
