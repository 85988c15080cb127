"""Push never follows a link out of the run folder; every transport keeps file modes both ways."""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import List

import pytest

from RLA.sync import open_transport
from RLA.sync.syncer import RunSyncer
from sync_helpers import Target, ftp_settings, sftp_settings, tree

pytestmark = pytest.mark.timeout(90)
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- host key of the worker"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def linked_run(make_run, tmp_path: Path):
    """A run whose log folder holds links: out of the run (file, folder), loops, dangling, and one inside."""
    run = make_run()
    secrets = tmp_path / "etc_ssh"
    secrets.mkdir()
    (secrets / "ssh_host_ed25519_key").write_bytes(SECRET)
    log = run.log_dir
    os.symlink(secrets, log / "ssh")                                  # a folder outside
    os.symlink(secrets / "ssh_host_ed25519_key", log / "key")         # a file outside
    os.symlink("loop_b", log / "loop_a")
    os.symlink("loop_a", log / "loop_b")                              # a link loop
    os.symlink(".", log / "self")                                     # a folder loop
    os.symlink("missing", log / "dangling")
    os.symlink("progress.csv", log / "latest.csv")                    # inside the run: sent as content
    os.symlink(f"../../../../../../../{secrets.name}/ssh_host_ed25519_key", log / "tb" / "sneaky")
    os.mkfifo(log / "pipe")                                           # reading it would hang
    return run


def test_push_sends_no_link_target_outside_the_run(target: Target, linked_run, tmp_path: Path) -> None:
    """Links out of the run, loops, dangling links and a FIFO are skipped with a warning; the rest arrives."""
    warnings: List[str] = []
    report = RunSyncer(target.settings, tmp_path / "data", warn=warnings.append).push([linked_run])
    for path in target.root_on_disk.rglob("*"):
        assert not path.is_symlink(), path
        if path.is_file():
            assert SECRET not in path.read_bytes(), path
    pushed = linked_run.moved(data_root=target.root_on_disk).log_dir
    assert (pushed / "latest.csv").read_bytes() == (linked_run.log_dir / "progress.csv").read_bytes()
    assert not (pushed / "latest.csv").is_symlink()
    for name in ("ssh", "key", "loop_a", "loop_b", "self", "dangling", "tb/sneaky", "pipe"):
        assert any(f"log/{name}'" in w for w in warnings), name
        assert not os.path.lexists(pushed / name), name
    assert report.files_skipped == 8
    data = tmp_path / "data"
    assert tree(target.root_on_disk) == {k: v for k, v in tree(data).items()
                                         if not (data / k).is_symlink() or k.endswith("/latest.csv")}


def test_push_refuses_a_run_folder_reached_through_a_link(make_run, tmp_path: Path) -> None:
    """data_root/log/<task> linked elsewhere: that data type of the run is not pushed (warned)."""
    run = make_run()
    elsewhere = tmp_path / "elsewhere"
    os.rename(run.log_dir.parents[3], elsewhere)  # log/demo/sub -> moved away, replaced by a link
    os.symlink(elsewhere, run.log_dir.parents[3])
    remote = tmp_path / "remote_db"
    from sync_helpers import settings

    warnings: List[str] = []
    RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(remote)), tmp_path / "data",
              warn=warnings.append).push([run])
    assert not (remote / "log").exists() and (remote / "code").is_dir()
    assert any("symbolic link" in w and "log" in w for w in warnings)


def test_pushed_files_keep_their_mode(target: Target, make_run, tmp_path: Path) -> None:
    """0600 stays 0600 and 0755 stays 0755 on the main node, also when only the mode changes later."""
    run = make_run()
    private = run.log_dir / "progress.csv"
    os.chmod(private, 0o600)
    os.chmod(run.code_dir / "train.py", 0o755)
    syncer = RunSyncer(target.settings, tmp_path / "data")
    syncer.push([run])
    pushed = run.moved(data_root=target.root_on_disk)
    assert _mode(pushed.log_dir / "progress.csv") == 0o600
    assert _mode(pushed.code_dir / "train.py") == 0o755
    assert _mode(pushed.log_dir / "run.json") == _mode(run.log_dir / "run.json")
    os.chmod(run.results_dir / "0-curve.png", 0o640)
    os.chmod(private, 0o644)
    syncer.push([run])
    assert _mode(pushed.results_dir / "0-curve.png") == 0o640
    assert _mode(pushed.log_dir / "progress.csv") == 0o644


def test_pulled_files_are_never_wider_than_the_server_or_the_umask(target: Target, make_run, tmp_path: Path) -> None:
    """A 0600 remote file arrives 0600; a 0644 one arrives 0600 under umask 077; setuid never arrives."""
    run = make_run()
    RunSyncer(target.settings, tmp_path / "data").push([run])
    pushed = run.moved(data_root=target.root_on_disk)
    os.chmod(pushed.log_dir / "progress.csv", 0o600)
    os.chmod(pushed.code_dir / "train.py", 0o4755)
    for umask, expected in ((0o022, {"log/progress.csv": 0o600, "log/log.txt": 0o644, "code/train.py": 0o755}),
                            (0o077, {"log/progress.csv": 0o600, "log/log.txt": 0o600, "code/train.py": 0o700})):
        old = os.umask(umask)
        try:
            RunSyncer(target.settings, tmp_path / f"pulled{umask:o}").pull()
        finally:
            os.umask(old)
        pulled = run.moved(data_root=tmp_path / f"pulled{umask:o}")
        for key, mode in expected.items():  # never setuid; never wider than there, nor than the umask
            data_type, _, inner = key.partition("/")
            assert _mode(pulled.path(data_type) / inner) == mode, (umask, key)


def test_a_fetched_tail_narrows_the_local_mode(target: Target, make_run, tmp_path: Path) -> None:
    """A log pulled as 0644, then made 0600 and appended to on the main node, is 0600 after the next pull."""
    run = make_run()
    pusher = RunSyncer(target.settings, tmp_path / "data")
    pusher.push([run])
    puller = RunSyncer(target.settings, tmp_path / "pulled")
    puller.pull()
    with open(run.log_dir / "log.txt", "ab") as handle:
        handle.write(b"more\n" * 20)
    os.chmod(run.log_dir / "log.txt", 0o600)
    pusher.push([run])
    assert puller.pull().files_fetched == 1
    assert _mode(run.moved(data_root=tmp_path / "pulled").log_dir / "log.txt") == 0o600


def test_local_transport_never_writes_through_a_link(tmp_path: Path, make_run) -> None:
    """A link at a pushed file's place on the main node is replaced, its target left alone."""
    from sync_helpers import settings

    run = make_run()
    remote = tmp_path / "remote_db"
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"original\n")
    pushed = run.moved(data_root=remote)
    pushed.log_dir.mkdir(parents=True)
    os.symlink(victim, pushed.log_dir / "progress.csv")
    RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(remote)), tmp_path / "data").push([run])
    assert victim.read_bytes() == b"original\n"
    assert (pushed.log_dir / "progress.csv").read_bytes() == (run.log_dir / "progress.csv").read_bytes()


def test_a_password_over_ftp_warns_and_points_to_sftp(ftpd, sshd, tmp_path: Path, monkeypatch) -> None:
    """FTP with a password warns at every connection (through warn, else as a RuntimeWarning); SFTP does not."""
    warnings: List[str] = []
    with open_transport(ftp_settings(ftpd), warn=warnings.append):
        pass
    assert any("clear text" in w and "sftp" in w for w in warnings)
    with pytest.warns(RuntimeWarning, match="sftp"):
        open_transport(ftp_settings(ftpd)).close()
    quiet: List[str] = []
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", "not-used-by-key-auth")
    with open_transport(sftp_settings(sshd, tmp_path), warn=quiet.append):
        pass
    assert not any("clear text" in w for w in quiet)


def test_local_transport_primitives_refuse_links(tmp_path: Path) -> None:
    """write and read at a link's path fail without touching or copying the target."""
    import io

    from RLA.sync.base import RemoteFileError
    from RLA.sync.local import LocalTransport

    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"original\n")
    os.symlink(victim, tmp_path / "link")
    transport = LocalTransport()
    for offset, expect in ((0, None), (9, 9)):
        with pytest.raises(RemoteFileError, match="symbolic link"):
            transport.write(str(tmp_path / "link"), io.BytesIO(b"owned"), offset, 5, expect_size=expect)
    with pytest.raises(RemoteFileError, match="symbolic link"):
        transport.read(str(tmp_path / "link"), io.BytesIO(), 0)
    assert victim.read_bytes() == b"original\n"
    assert transport.stat(str(tmp_path / "link")).is_link
