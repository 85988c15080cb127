"""``rla sync pull`` against hostile servers: nothing is written or read outside the data root.

The servers (``hostile_servers.py``) list and serve crafted names next to good runs. After
each pull a sentinel folder next to the data root stays empty, a victim file keeps its
content, no crafted byte lands anywhere, and the good run of the same listing arrives.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from RLA.errors import UnsafePathError
from RLA.sync.syncer import RunSyncer
from hostile_servers import ENDLESS, Fake, HostileSFTPServer, hostile_ftp_handler
from sync_helpers import FTP_PASSWORD, FTP_USER, RUN_NAMES, TASK, settings, tree

pytestmark = pytest.mark.timeout(120)
DAY = f"/db/log/{TASK}/2026/03/04"
RUN = f"{DAY}/{RUN_NAMES[0]}"
#: Components below the data root down to a run's folder: log/demo/sub/2026/03/04/<run>.
DEPTH = 3 + len(TASK.split("/")) + 1


@pytest.fixture
def box(tmp_path: Path, make_run) -> Dict[str, Path]:
    """The server's folder with one good run, and next to the (empty) data root a sentinel and a victim."""
    server_root = tmp_path / "server"
    make_run(RUN_NAMES[0], date="2026/03/04", root=server_root / "db")
    victim_box = tmp_path / "victim_box"
    (victim_box / "sentinel").mkdir(parents=True)
    (victim_box / "victim.txt").write_bytes(b"original\n")
    return {"server": server_root, "box": victim_box, "data": victim_box / "data",
            "sentinel": victim_box / "sentinel", "victim": victim_box / "victim.txt"}


def _attacks(box: Dict[str, Path]) -> Dict[str, List[Fake]]:
    up = "/".join([".."] * (DEPTH + 1))  # from a file of the run up to victim_box
    escape_run = "10-00-00-000009_&x=" + "/.." * (DEPTH + 1) + "/sentinel"
    return {
        DAY: [Fake(escape_run, "dir", children=[Fake("progress.csv")]),
              Fake("10-00-00-000010_&x=\n", "dir", children=[Fake("progress.csv")]),
              Fake("10-00-00-000011_&x=1", "link"),
              Fake("..", "dir", children=[Fake("escape.txt")])],
        f"{RUN}": [Fake(f"{up}/victim.txt"), Fake(str(box["sentinel"] / "abs.txt")),
                   Fake("sub", "dir", children=[Fake(f"../../{up}/sentinel/x")]),
                   Fake("sub/../..", "dir", children=[Fake("y")]),
                   Fake("bad\nname.txt"), Fake("nul\x00.txt"), Fake("ctl\x1b.txt"), Fake("evil_link", "link"),
                   Fake("..", "dir", children=[Fake("escape.txt")])],
        f"/db/log/{TASK}": [Fake("\uff12\uff10\uff12\uff16", "dir", children=[Fake("03", "dir", children=[
            Fake("04", "dir", children=[Fake(RUN_NAMES[1], "dir", children=[Fake("progress.csv")])])])])],
        f"/db/archive_tester/{TASK}/2026/03/04": [Fake(escape_run + ".json")],
    }


@pytest.fixture
def start_hostile(request: pytest.FixtureRequest, box: Dict[str, Path], tmp_path: Path):
    """``start_hostile(kind, extra, **settings)``: a hostile server of ``kind`` (stopped after the test)."""

    def start(kind: str, extra: Dict[str, List[Fake]], **more: object) -> object:
        if kind == "ftp":
            return _ftp_server(request, box["server"], extra, **more)
        server = HostileSFTPServer(box["server"], extra, tmp_path)
        request.addfinalizer(server.close)
        return settings(file_transfer_protocol="sftp", ftp_server="127.0.0.1", port=server.port,
                        username="root", key_filename=str(server.client_key), known_hosts=str(server.known_hosts),
                        allow_agent=False, remote_data_root="/db", **more)

    return start


@pytest.fixture(params=["sftp", "ftp"])
def hostile(request: pytest.FixtureRequest, box: Dict[str, Path], start_hostile) -> Tuple[str, object]:
    """Each hostile server in turn, serving the good run and the attacks; yields its settings."""
    return request.param, start_hostile(request.param, _attacks(box))


def _ftp_server(request: pytest.FixtureRequest, home: Path, extra: Dict[str, List[Fake]], **more: object) -> object:
    import threading

    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.servers import FTPServer

    handler = hostile_ftp_handler(home, extra)
    authorizer = DummyAuthorizer()
    authorizer.add_user(FTP_USER, FTP_PASSWORD, str(home), perm="elr")
    handler.authorizer = authorizer
    server = FTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.05}, daemon=True)
    thread.start()

    def stop() -> None:
        server.close_all()
        thread.join(timeout=10)

    request.addfinalizer(stop)
    return settings(file_transfer_protocol="ftp", ftp_server="127.0.0.1", port=server.socket.getsockname()[1],
                    username=FTP_USER, password=FTP_PASSWORD, remote_data_root="/db", **more)


def _nothing_escaped(box: Dict[str, Path]) -> None:
    assert list(box["sentinel"].iterdir()) == []
    assert box["victim"].read_bytes() == b"original\n"
    outside = [p for p in box["box"].rglob("*") if not p.is_relative_to(box["data"])]
    assert sorted(outside) == sorted([box["sentinel"], box["victim"]])
    for path in box["data"].rglob("*"):
        assert not path.name.endswith(".rla-part"), path
        assert all(ord(c) >= 0x20 for c in path.name), path
        assert not path.is_symlink(), path
        if path.is_file():
            assert b"owned" not in path.read_bytes(), path


def test_crafted_names_are_skipped_and_the_good_run_arrives(hostile, box) -> None:
    """``..``, absolute names, ``sub/../..``, control characters, links, non-ASCII dates: none is written."""
    kind, remote = hostile
    warnings: List[str] = []
    report = RunSyncer(remote, box["data"], warn=warnings.append).pull()
    _nothing_escaped(box)
    assert tree(box["data"]) == tree(box["server"] / "db")  # the good run, byte for byte
    assert report.files_received == 8  # FTP splits a name at its newline: a plain name may remain
    assert not (box["data"] / "log" / TASK / "\uff12\uff10\uff12\uff16").exists()
    skipped = "\n".join(w for w in warnings if "skipped" in w)
    names = ["victim.txt", "abs.txt", "evil_link", "nul\\x00.txt", "ctl\\x1b.txt", "10-00-00-000011", "sub/../.."]
    if kind == "sftp":  # FTP cuts a listing line at a newline: the name never arrives whole
        names.append("bad\\nname.txt")
    for name in names:
        assert name in skipped, name
    again = RunSyncer(remote, box["data"], warn=warnings.append).pull()
    assert again.files_received == 0
    _nothing_escaped(box)


@pytest.mark.parametrize("kind", ["sftp", "ftp"])
def test_a_server_that_lies_about_sizes_cannot_fill_the_disk(kind, box, start_hostile) -> None:
    """Endless files listed as 10 and 1000 bytes are cut one byte later; one listed over the cap is never read."""
    extra = {RUN: [Fake("liar.bin", endless=True, claimed=10), Fake("huge.bin", endless=True, claimed=ENDLESS)],
             f"/db/code/{TASK}/2026/03/04/{RUN_NAMES[0]}": [Fake("under_cap.bin", endless=True, claimed=1000)]}
    remote = start_hostile(kind, extra, max_file_size="1M")
    warnings: List[str] = []
    report = RunSyncer(remote, box["data"], warn=warnings.append).pull()
    good = sum(len(v) for v in tree(box["server"] / "db").values())
    assert report.bytes_received <= good + 11 + 1001
    assert report.files_skipped == 3 and report.files_received == 8
    assert not list(box["data"].rglob("*.bin")) and not list(box["data"].rglob(".*.rla-part"))
    assert any("huge.bin" in w and "cap" in w for w in warnings)
    assert any("liar.bin" in w and "listed 10 bytes" in w for w in warnings)


def test_pull_never_writes_through_a_local_link(box, tmp_path, make_run) -> None:
    """data_root/log/<task> linked to a folder elsewhere: refused with a warning; other types still arrive."""
    remote = settings(file_transfer_protocol="local", remote_data_root=str(box["server"] / "db"))
    (box["data"] / "log" / "demo").mkdir(parents=True)
    os.symlink(box["sentinel"], box["data"] / "log" / "demo" / "sub")
    warnings: List[str] = []
    report = RunSyncer(remote, box["data"], warn=warnings.append).pull()
    assert list(box["sentinel"].iterdir()) == []
    assert report.files_skipped == 4 and report.files_received == 4  # log/* refused; code, results, state pulled
    assert any("symbolic link" in w and "log/" in w for w in warnings)
    assert (box["data"] / "code" / TASK / "2026/03/04" / RUN_NAMES[0] / "train.py").is_file()


def test_pull_never_overwrites_a_local_file_link(box) -> None:
    """A run file that is a link to a victim outside is refused, not followed (FETCH and DOWNLOAD)."""
    remote = settings(file_transfer_protocol="local", remote_data_root=str(box["server"] / "db"))
    log_dir = box["data"] / "log" / TASK / "2026/03/04" / RUN_NAMES[0]
    log_dir.mkdir(parents=True)
    os.symlink(box["victim"], log_dir / "log.txt")
    os.symlink(box["victim"], log_dir / "run.json")
    RunSyncer(remote, box["data"]).pull()
    assert box["victim"].read_bytes() == b"original\n"
    assert (log_dir / "progress.csv").is_file() and (log_dir / "log.txt").is_symlink()


def test_remote_links_are_not_copied_by_the_local_transport(box) -> None:
    """A link in the main node's folder (to a secret outside it) is skipped: its target is never read."""
    secret = box["box"] / "secret.txt"
    secret.write_bytes(b"owned secret\n")
    run_dir = box["server"] / "db" / "log" / TASK / "2026/03/04" / RUN_NAMES[0]
    os.symlink(secret, run_dir / "stolen.txt")
    os.symlink(box["box"], run_dir / "whole_box")
    warnings: List[str] = []
    report = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(box["server"] / "db")),
                       box["data"], warn=warnings.append).pull()
    assert report.files_received == 8
    assert not (box["data"] / "log" / TASK / "2026/03/04" / RUN_NAMES[0] / "stolen.txt").exists()
    assert sum("symbolic link" in w for w in warnings) == 2
    secret.unlink()
    _nothing_escaped(box)


@pytest.mark.parametrize("task", ["../..", "a/./b", "a/../../b", "a\nb"])
def test_a_hostile_task_argument_is_refused(box, task) -> None:
    """pull --task must be a plain relative task: UnsafePathError before anything is listed."""
    remote = settings(file_transfer_protocol="local", remote_data_root=str(box["server"] / "db"))
    with pytest.raises(UnsafePathError):
        RunSyncer(remote, box["data"]).pull(task=task)


def test_real_sshd_with_links_control_characters_and_a_huge_file(sshd, box) -> None:
    """What a real file system can hold, served by OpenSSH: links out, odd names, a sparse 64 MiB file."""
    from sync_helpers import sftp_settings

    db = box["server"] / "db"
    run_dir = db / "log" / TASK / "2026/03/04" / RUN_NAMES[0]
    secret = box["box"] / "secret.txt"
    secret.write_bytes(b"owned secret\n")
    os.symlink(secret, run_dir / "stolen.txt")
    os.symlink("/etc", run_dir / "etc")
    os.symlink(box["sentinel"], db / "log" / TASK / "2026/03/04" / "10-00-00-000012_&x=1")
    (run_dir / "bad\nname.txt").write_bytes(b"owned\n")
    (run_dir / "ctl\x1b.txt").write_bytes(b"owned\n")
    wide = db / "log" / TASK / "\uff12\uff10\uff12\uff16" / "03" / "04" / RUN_NAMES[1]
    wide.mkdir(parents=True)
    (wide / "progress.csv").write_bytes(b"owned\n")
    with open(run_dir / "huge.bin", "wb") as handle:
        handle.truncate(ENDLESS)
    warnings: List[str] = []
    report = RunSyncer(sftp_settings(sshd, db, max_file_size="1M"), box["data"], warn=warnings.append).pull()
    secret.unlink()
    _nothing_escaped(box)
    assert report.files_received == 8 and report.files_skipped == 5  # 2 links, 2 odd names, huge.bin
    assert report.bytes_received < 1024 * 1024
    for name in ("stolen.txt", "etc", "10-00-00-000012", "bad\\nname.txt", "ctl\\x1b.txt", "huge.bin"):
        assert any(name in w for w in warnings), name
