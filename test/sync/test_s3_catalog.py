"""The store-side catalog: pushes publish per-run entries, `--data-root s3://` lists runs from them.

Against moto's S3 server on 127.0.0.1 (fixtures in s3_server.py). Requests are counted by
the transport the refresh opens (``connect``), so the tests say what a refresh costs
without timing anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest
from s3_server import S3Box

from RLA.layout import iter_run_dirs
from RLA.query import list_runs
from RLA.query.testing import make_run as make_query_run
from RLA.sync import open_transport
from RLA.sync.remote_root import open_data_root
from RLA.sync.store_catalog import FOLDER
from RLA.sync.syncer import RunSyncer

pytestmark = pytest.mark.timeout(180)


def make_source(root: Path, count: int = 3) -> List[Any]:
    for seed in range(1, count + 1):
        make_query_run(
            root,
            task="demo",
            params={"seed": seed, "lr": 1e-3 * seed, "algo": "sac"},
            curves={"return": [seed * i * 0.5 for i in range(40)]},
        )
    make_query_run(root, task="other", params={"seed": 9}, status="running", curves={"loss": [1.0, 0.5]})
    return list(iter_run_dirs(root))


def frame_of(root: Path) -> Any:
    frame = list_runs(root).drop(columns=["log_dir"])
    return frame.sort_values("index").reset_index(drop=True)


class Counted:
    """``connect`` for a refresh that keeps the transports it opened (their request counts)."""

    def __init__(self, settings: Any) -> None:
        self.settings, self.made = settings, []  # type: Any, List[Any]

    def __call__(self) -> Any:
        transport = open_transport(self.settings)
        self.made.append(transport)
        return transport

    def requests(self) -> dict:
        out: dict = {}
        for transport in self.made:
            for name, count in transport.requests.items():
                out[name] = out.get(name, 0) + count
        self.made.clear()
        return out


def open_index(box: S3Box, settings: Any, cache: Path, counted: Any = None) -> Path:
    url = f"s3://{box.bucket}/{settings.prefix}"
    return open_data_root(url, settings=settings, cache=cache, files=False, connect=counted)


def test_listing_runs_reads_the_catalog_not_the_run_files(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Cold: a few catalog requests and no run file; the frame equals the local one; the curves stay on the store."""
    source = tmp_path / "src"
    runs = make_source(source)
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(runs)
    counted = Counted(settings)
    root = open_index(s3_bucket, settings, tmp_path / "cache", counted)
    sent = counted.requests()
    assert frame_of(root).equals(frame_of(source))
    assert sent.get("get_object", 0) <= 2 and sent.get("list_objects_v2", 0) <= 2, sent
    assert not list((tmp_path / "cache").rglob("progress.csv"))


def test_a_warm_listing_is_one_head_request(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Nothing pushed since the last refresh: one HEAD of the generation object (and the bucket check)."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache = tmp_path / "cache"
    open_index(s3_bucket, settings, cache)
    counted = Counted(settings)
    root = open_index(s3_bucket, settings, cache, counted)
    assert counted.requests() == {"head_bucket": 1, "head_object": 1}
    assert frame_of(root).equals(frame_of(source))


def test_a_push_shows_at_the_next_listing(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A grown curve, a finished status and a new run pushed later: the next listing equals the local frame."""
    source = tmp_path / "src"
    runs = make_source(source)
    settings = s3_bucket.settings(prefix="lab")
    syncer = RunSyncer(settings, source)
    syncer.push(runs)
    cache = tmp_path / "cache"
    open_index(s3_bucket, settings, cache)
    with open(runs[0].log_dir / "progress.csv", "a") as handle:
        handle.write("40,99.0\n")
    extra = make_query_run(
        source, task="demo", params={"seed": 4, "lr": 1e-3, "algo": "td3"}, curves={"return": [1.0]}
    )
    syncer.push([*runs, extra])
    root = open_index(s3_bucket, settings, cache)
    assert frame_of(root).equals(frame_of(source))
    assert len(frame_of(root)) == 5


def test_a_store_without_catalog_is_listed(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Runs put on the store by another tool (no catalog): the listing path, the same frame."""
    source = tmp_path / "src"
    make_source(source)
    client = s3_bucket.boto()
    for path in source.rglob("*"):
        if path.is_file() and not path.name.startswith(".rla"):
            key = f"lab/{path.relative_to(source).as_posix()}"
            client.put_object(Bucket=s3_bucket.bucket, Key=key, Body=path.read_bytes())
    root = open_index(s3_bucket, s3_bucket.settings(prefix="lab"), tmp_path / "cache")
    assert frame_of(root).equals(frame_of(source))


def test_runs_pushed_before_the_catalog_keep_the_store_listed(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A store with runs the catalog does not know (put by another tool) is listed: none of them is missed."""
    old, new = tmp_path / "old", tmp_path / "new"
    make_source(old, count=2)
    client = s3_bucket.boto()
    for path in old.rglob("*"):
        if path.is_file() and not path.name.startswith(".rla"):
            client.put_object(
                Bucket=s3_bucket.bucket, Key=f"lab/{path.relative_to(old).as_posix()}", Body=path.read_bytes()
            )
    settings = s3_bucket.settings(prefix="lab")
    added = make_query_run(new, task="fresh", params={"seed": 5}, curves={"return": [3.0]})
    RunSyncer(settings, new).push([added])
    assert any(FOLDER in key for key in s3_bucket.keys())
    frame = frame_of(open_index(s3_bucket, settings, tmp_path / "cache"))
    assert len(frame) == 4 and set(frame["task"]) == {"demo", "other", "fresh"}
