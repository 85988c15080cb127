"""Reading a database in place: ``file://``, ``sftp://`` (real sshd) and ``s3://`` (moto) give one list_runs frame."""
from __future__ import annotations

from pathlib import Path

import pytest

from RLA.layout import iter_run_dirs
from RLA.query import list_runs
from RLA.query.testing import make_run as make_query_run
from RLA.sync.remote_root import open_data_root
from RLA.sync.syncer import RunSyncer
from s3_server import S3Box
from sync_helpers import sftp_settings

pytestmark = pytest.mark.timeout(180)


def _source(root: Path) -> list:
    for seed, lr in ((1, 1e-3), (2, 3e-4), (3, 1e-4)):
        make_query_run(root, task="demo", params={"seed": seed, "lr": lr, "algo": "sac"},
                       curves={"return": [seed * i * 0.5 for i in range(40)]})
    make_query_run(root, task="other", params={"seed": 9}, status="running", curves={"loss": [1.0, 0.5]})
    return list(iter_run_dirs(root))


def _frame(root: Path):
    frame = list_runs(root).drop(columns=["log_dir"])
    return frame.sort_values("index").reset_index(drop=True)


def test_the_same_runs_through_file_sftp_and_s3(sshd, s3_bucket: S3Box, tmp_path: Path) -> None:
    """One database pushed to an SSH main node and to a bucket: the three URLs list the same frame."""
    source = tmp_path / "src"
    runs = _source(source)
    sftp = sftp_settings(sshd, tmp_path / "main_db")
    RunSyncer(sftp, source).push(runs)
    s3 = s3_bucket.settings(prefix="lab/rl")
    RunSyncer(s3, source).push(runs)
    expected = _frame(open_data_root(f"file://{source}"))
    assert len(expected) == 4
    via_sftp = open_data_root(f"sftp://root@127.0.0.1:{sshd.port}{tmp_path / 'main_db'}", base=sftp,
                              cache=tmp_path / "cache_sftp")
    via_s3 = open_data_root(f"s3://{s3_bucket.bucket}/lab/rl", base=s3, cache=tmp_path / "cache_s3")
    for root in (via_sftp, via_s3):
        assert _frame(root).equals(expected), root
    assert not any(key.endswith(".sqlite") for key in s3_bucket.keys())  # the index stays on local disk
    assert (via_s3 / ".rla_index.sqlite").exists()


def test_the_cache_follows_the_store(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A run added, a curve grown and a run deleted on the store show at the next open; checkpoints stay there."""
    source = tmp_path / "src"
    runs = _source(source)
    ckpt = runs[0].checkpoint_dir / "checkpoint-10.pt"
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    ckpt.write_bytes(b"weights" * 1000)
    s3 = s3_bucket.settings(prefix="lab", sync_types=["log", "code", "checkpoint", "archive_tester"])
    syncer = RunSyncer(s3, source)
    syncer.push(runs)
    url, cache = f"s3://{s3_bucket.bucket}/lab", tmp_path / "cache"
    assert len(list_runs(open_data_root(url, base=s3, cache=cache))) == 4
    assert not list(cache.rglob("checkpoint-10.pt"))
    with open(runs[0].log_dir / "progress.csv", "a") as handle:
        handle.write("40,99.0\n")
    extra = make_query_run(source, task="demo", params={"seed": 4, "lr": 1e-3, "algo": "sac"},
                           curves={"return": [1.0]})
    syncer.push([runs[0], extra])
    client = s3_bucket.boto()
    gone = runs[1].relative
    for key in [k for k in s3_bucket.keys() if gone in k]:
        client.delete_object(Bucket=s3_bucket.bucket, Key=key)
    frame = list_runs(open_data_root(url, base=s3, cache=cache))
    assert len(frame) == 4 and not any(gone in d for d in frame["log_dir"])
    cached = (cache / runs[0].log_dir.relative_to(source) / "progress.csv").read_bytes()
    assert cached == (runs[0].log_dir / "progress.csv").read_bytes()


def test_rla_list_reads_a_bucket(s3_bucket: S3Box, tmp_path: Path, monkeypatch, capsys) -> None:
    """`rla list --data-root s3://bucket/prefix` with the endpoint from the environment (AWS_ENDPOINT_URL)."""
    from rla_scripts.cli import main

    source = tmp_path / "src"
    RunSyncer(s3_bucket.settings(prefix="lab"), source).push(_source(source))
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_bucket.endpoint)
    monkeypatch.setenv("RLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["list", "--data-root", f"s3://{s3_bucket.bucket}/lab"]) == 0
    out = capsys.readouterr().out
    assert out.count("demo") >= 3 and "other" in out
    assert (tmp_path / "cache" / "s3").is_dir()


def test_rla_view_and_plot_read_a_bucket(s3_bucket: S3Box, tmp_path: Path, monkeypatch, capsys) -> None:
    """`rla view` and `rla plot` with --data-root s3://... give what they give on the local database."""
    import json

    from rla_scripts.cli import main

    source = tmp_path / "src"
    runs = _source(source)
    RunSyncer(s3_bucket.settings(prefix="lab"), source).push(runs)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_bucket.endpoint)
    monkeypatch.setenv("RLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    url = f"s3://{s3_bucket.bucket}/lab"
    run = next(r for r in runs if r.task == "demo")
    views = []
    for root in (url, str(source)):
        capsys.readouterr()
        assert main(["view", "--data-root", root, run.index, "--format", "json"]) == 0
        views.append(json.loads(capsys.readouterr().out))
    for view in views:
        for entry in view["files"].values():
            entry.pop("path")  # the cache's folder vs the source's
    assert views[0] == views[1]
    assert views[0]["hyper_params"]["seed"] == 1 and views[0]["last_metrics"]["return"] == 0.5 * 39
    for root, out in ((url, "s3.png"), (str(source), "local.png")):
        assert main(["plot", "--data-root", root, "--task", "demo", "--metrics", "return", "--split-keys", "algo",
                     "--resample", "0", "--smooth", "0", "--out", out]) == 0
        assert (tmp_path / out).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "s3.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert "return" in (tmp_path / "s3.csv").read_text()
