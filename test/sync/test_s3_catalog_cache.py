"""What a cold catalog read puts in the cache, archived runs, damaged runs and lost records (moto on 127.0.0.1).

Fixtures and helpers come from s3_server.py and test_s3_catalog.py.
"""

from __future__ import annotations

import concurrent.futures
import gzip
import json
from pathlib import Path
from typing import Any, List

import pytest
from s3_server import S3Box
from test_s3_catalog import Counted, make_source, open_index

from RLA.errors import RLAError, UnsafePathError
from RLA.query import BrokenRunWarning, Catalog, list_runs
from RLA.query.testing import make_run
from RLA.sync import catalog_seed
from RLA.sync.store_catalog import CatalogError
from RLA.sync.syncer import RunSyncer

pytestmark = pytest.mark.timeout(180)


def frame(root: Path, archived: Any = False) -> Any:
    out = list_runs(root, archived=archived).drop(columns=["log_dir"])
    return out.sort_values("index").reset_index(drop=True)


def _archived_source(root: Path) -> list:
    runs = make_source(root, count=2)
    runs.append(make_run(root, task="demo", params={"seed": 7}, curves={"return": [5.0, 6.0]}, archived=True))
    runs.append(make_run(root, task="old", params={"seed": 8}, archived=True, style="original"))
    return runs


def test_a_cold_read_writes_folders_only(s3_bucket: S3Box, tmp_path: Path) -> None:
    """The records go into the index: the cache holds the runs' log/ and code/ folders, no file of theirs."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache = tmp_path / "cache"
    root = open_index(s3_bucket, settings, cache)
    assert frame(root).equals(frame(source))
    for data_type in ("log", "code"):
        assert [p for p in (cache / data_type).rglob("*") if not p.is_dir()] == []
        assert len([p for p in (cache / data_type).glob("*/*/*/*/*") if p.is_dir()]) == 4


@pytest.mark.parametrize("use_catalog", ["1", "0"])
def test_archived_runs_show_where_they_show_locally(
    s3_bucket: S3Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_catalog: str
) -> None:
    """Archived runs pushed: listed with archived=True / None, not by default; catalog and listing agree."""
    monkeypatch.setenv("RLA_REMOTE_CATALOG", use_catalog)
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(_archived_source(source))
    root = open_index(s3_bucket, settings, tmp_path / "cache")
    for archived in (False, True, None):
        assert frame(root, archived).equals(frame(source, archived)), archived
    assert len(frame(root, True)) == 2 and len(frame(root, None)) == 5


def test_an_archived_run_deleted_from_the_store_leaves_the_listing(s3_bucket: S3Box, tmp_path: Path) -> None:
    """An archived run's objects deleted and the catalog republished without it: gone from the next listing."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    syncer = RunSyncer(settings, source)
    runs = _archived_source(source)
    syncer.push(runs)
    cache = tmp_path / "cache"
    assert len(frame(open_index(s3_bucket, settings, cache), True)) == 2
    client = s3_bucket.boto()
    gone = runs[-1]
    for key in [k for k in s3_bucket.keys() if gone.name in k or ".rla-catalog/" in k]:
        client.delete_object(Bucket=s3_bucket.bucket, Key=key)
    (source / ".rla_sync").rename(tmp_path / "forgotten")  # the pusher republishes every entry
    syncer.push(runs[:-1])
    assert len(frame(open_index(s3_bucket, settings, cache), True)) == 1


def test_a_generation_without_archived_runs_lists_the_store(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A catalog written before archived runs were catalogued is not trusted: the store is listed (same frames)."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(_archived_source(source))
    body = {"version": 1, "complete": True, "written": 1.0, "nonce": "00"}
    key = "lab/.rla-catalog/generation"
    s3_bucket.boto().put_object(Bucket=s3_bucket.bucket, Key=key, Body=json.dumps(body).encode())
    counted = Counted(settings)
    root = open_index(s3_bucket, settings, tmp_path / "cache", counted)
    assert counted.requests()["list_objects_v2"] >= 4  # arc/ and every data type listed
    assert frame(root, None).equals(frame(source, None))


def _settle_folders(cache: Path) -> None:
    """Date the cache's folders a minute back and list once, so the index trusts its listings."""
    import os
    import time

    old = time.time() - 60
    for folder in [cache, *(p for p in cache.rglob("*") if p.is_dir())]:
        os.utime(folder, (old, old))
    frame(cache)


def test_a_damaged_run_is_reported_as_locally(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A run whose run.json is damaged: skipped with the same reason, also after a good version was listed."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    syncer = RunSyncer(settings, source)
    runs = make_source(source)
    syncer.push(runs)
    cache = tmp_path / "cache"
    assert len(frame(open_index(s3_bucket, settings, cache))) == 4
    _settle_folders(cache)  # the index trusts its listings of them: only the catalog can say what changed
    (runs[0].log_dir / "run.json").write_text('{"status": 5}')
    syncer.push(runs)
    skipped = []
    for root in (
        source,
        open_index(s3_bucket, settings, cache),
        open_index(s3_bucket, settings, tmp_path / "c2"),
    ):
        with pytest.warns(BrokenRunWarning):
            listed = list_runs(root)
        assert len(listed) == 3
        skipped.append([reason for _index, reason in listed.attrs["skipped"]])
    assert skipped[0] and skipped[1] == skipped[0] and skipped[2] == skipped[0]


def test_records_replaced_by_a_rebuild_come_back(s3_bucket: S3Box, tmp_path: Path) -> None:
    """`rla index --rebuild` on the cache (same file, rows re-read from folders): the next refresh restores them."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache = tmp_path / "cache"
    open_index(s3_bucket, settings, cache)
    with Catalog(cache) as index:
        index.rebuild()
    assert not frame(cache).equals(frame(source))  # the folders alone have no parameters or curves
    counted = Counted(settings)
    assert frame(open_index(s3_bucket, settings, cache, counted)).equals(frame(source))
    assert counted.requests().get("get_object", 0) >= 1  # the catalog was read again
    counted = Counted(settings)
    assert frame(open_index(s3_bucket, settings, cache, counted)).equals(frame(source))
    assert counted.requests() == {"head_bucket": 1, "head_object": 1}


GOOD = {"stamp": 9e9, "texts": {}, "progress": None, "progress_mtime": None, "fetch": []}
HOSTILE = {
    "archived run outside the root": {
        "version": 1,
        "runs": {},
        "archived": {"../../../../escape/2026/01/01/10-00-00-000000": GOOD},
    },
    "archived run in a hidden task": {
        "version": 1,
        "runs": {},
        "archived": {".trash/2026/01/01/10-00-00-000000": GOOD},
    },
    "archived runs not a mapping": {
        "version": 1,
        "runs": {},
        "archived": ["demo/2026/01/01/10-00-00-000000"],
    },
    "archived entry of the wrong type": {
        "version": 1,
        "runs": {},
        "archived": {"demo/2026/01/01/10-00-00-000000": []},
    },
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_crafted_archived_entries_are_refused(s3_bucket: S3Box, tmp_path: Path, case: str) -> None:
    """Crafted archived sections: a CatalogError; nothing written outside the cache."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    key = "lab/.rla-catalog/entries/9999999999999999999-00000000000000aa.json.gz"
    body = gzip.compress(json.dumps(HOSTILE[case]).encode())
    s3_bucket.boto().put_object(Bucket=s3_bucket.bucket, Key=key, Body=body)
    cache = tmp_path / "deep" / "cache"
    with pytest.raises(CatalogError) as info:
        open_index(s3_bucket, settings, cache)
    assert isinstance(info.value, RLAError)
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["cache"]
    assert not (tmp_path / "escape").exists()


class _CountedPool(concurrent.futures.ProcessPoolExecutor):
    """A process pool that counts the parts sent to its workers."""

    submitted: List[Any] = []

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        _CountedPool.submitted.append(args)
        return super().submit(*args, **kwargs)


def _parts_of_two(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold read of a few runs shared by this process and a worker process (as of 2,000 runs on 2 CPUs)."""
    _CountedPool.submitted = []
    monkeypatch.setattr(catalog_seed, "PARALLEL_MIN", 1)
    monkeypatch.setattr(catalog_seed.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(catalog_seed.concurrent.futures, "ProcessPoolExecutor", _CountedPool)


def test_a_cold_read_shared_with_a_worker_process_lists_every_run(
    s3_bucket: S3Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half the runs are read in a worker process: same frame as the local root, their folders made."""
    _parts_of_two(monkeypatch)
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache = tmp_path / "cache"
    assert frame(open_index(s3_bucket, settings, cache)).equals(frame(source))
    assert len(_CountedPool.submitted) == 1 and len(_CountedPool.submitted[0][1][1]) == 2
    assert len([p for p in (cache / "code").glob("*/*/*/*/*") if p.is_dir()]) == 4


def test_a_link_met_by_a_worker_process_is_refused(
    s3_bucket: S3Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's part (the last runs: task 'other') meets a planted link: the read fails, nothing written there."""
    _parts_of_two(monkeypatch)
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (cache / "log").mkdir(parents=True)
    (cache / "log" / "other").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        open_index(s3_bucket, settings, cache)
    assert len(_CountedPool.submitted) == 1
    assert not list(elsewhere.iterdir())


def test_a_damaged_run_in_a_worker_process_is_reported_as_locally(
    s3_bucket: S3Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's part holds a damaged run: it is read from its files here and skipped with the local reason."""
    _parts_of_two(monkeypatch)
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    runs = make_source(source)
    (runs[-1].log_dir / "run.json").write_text('{"status": 5}')  # task 'other': the last part
    RunSyncer(settings, source).push(runs)
    skipped = []
    for root in (source, open_index(s3_bucket, settings, tmp_path / "cache")):
        with pytest.warns(BrokenRunWarning):
            listed = list_runs(root)
        assert len(listed) == 3
        skipped.append([reason for _index, reason in listed.attrs["skipped"]])
    assert skipped[0] and skipped[1] == skipped[0]
    assert len(_CountedPool.submitted) == 1
