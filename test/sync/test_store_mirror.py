"""Reading a bucket in place by listing it: one listing per data type, only changed files fetched (moto's S3 server).

Requests are counted by the transport's client (every S3 call goes through it), so
"an unchanged store costs only the listing" is checked exactly, not timed.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, List

import pytest
from s3_server import S3Box

from RLA.errors import ConfigError
from RLA.layout import iter_run_dirs
from RLA.query import list_runs
from RLA.query.testing import make_run as make_query_run
from RLA.sync import open_transport
from RLA.sync.base import RemoteFileError
from RLA.sync.remote_root import MIRRORED_TYPES, open_data_root
from RLA.sync.store_mirror import STATE_FILE
from RLA.sync.syncer import RunSyncer

#: Listings of a refresh: one per mirrored data type, and one of arc/ (which archived types it holds).
LISTINGS = len(MIRRORED_TYPES) + 1

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def _listing_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the listing path: the store's catalog is not read (test_s3_catalog.py)."""
    monkeypatch.setenv("RLA_REMOTE_CATALOG", "0")


class Opened:
    """A ``connect`` for the refresh that keeps every transport it opened (to count requests)."""

    def __init__(self, settings: Any) -> None:
        self.settings, self.transports = settings, []  # type: ignore[var-annotated]

    def __call__(self) -> Any:
        transport = open_transport(self.settings)
        self.transports.append(transport)
        return transport

    def requests(self) -> dict:
        assert len(self.transports) == 1
        return {k: v for k, v in self.transports[0].requests.items() if v}


def _store(box: S3Box, tmp_path: Path, runs: int = 3) -> tuple:
    source = tmp_path / "src"
    for seed in range(runs):
        make_query_run(
            source, task="demo", params={"seed": seed}, curves={"r": [seed * i for i in range(30)]}
        )
    settings = box.settings(prefix="lab")
    RunSyncer(settings, source).push(list(iter_run_dirs(source)))
    return source, settings


def _refresh(box: S3Box, settings: Any, cache: Path, warnings: List[str] | None = None, **kw: Any) -> Opened:
    opened = Opened(settings)
    open_data_root(
        f"s3://{box.bucket}/lab",
        settings=settings,
        cache=cache,
        connect=opened,
        warn=(warnings.append if warnings is not None else None),
        **kw,
    )
    return opened


def _cached(cache: Path, source: Path, path: Path) -> Path:
    return cache / path.relative_to(source)


def test_an_unchanged_store_costs_only_the_listing(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Cold: one GET per file and no HEAD; warm: exactly one listing per data type (and arc/), nothing else."""
    source, settings = _store(s3_bucket, tmp_path)
    cache = tmp_path / "cache"
    cold = _refresh(s3_bucket, settings, cache).requests()
    files = [
        p for t in MIRRORED_TYPES if (source / t).exists() for p in (source / t).rglob("*") if p.is_file()
    ]
    assert cold == {"head_bucket": 1, "list_objects_v2": LISTINGS, "get_object": len(files)}
    warm = _refresh(s3_bucket, settings, cache).requests()
    assert warm == {"head_bucket": 1, "list_objects_v2": LISTINGS}
    assert len(list_runs(cache)) == 3


def test_a_changed_file_is_fetched(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A same-size overwrite (ETag differs) and a grown log (tail only) are fetched, nothing else."""
    source, settings = _store(s3_bucket, tmp_path)
    cache = tmp_path / "cache"
    _refresh(s3_bucket, settings, cache)
    runs = sorted(iter_run_dirs(source), key=lambda r: r.relative)
    run_json = runs[0].log_dir / "run.json"
    old = run_json.read_bytes()
    new = old.replace(b"finished", b"crashed!") if b"finished" in old else bytes(reversed(old))
    assert len(new) == len(old) and new != old
    key = f"lab/{run_json.relative_to(source).as_posix()}"
    s3_bucket.boto().put_object(Bucket=s3_bucket.bucket, Key=key, Body=new)  # another tool, same size
    with open(runs[1].log_dir / "progress.csv", "a") as handle:
        handle.write("99,1.5\n")
    RunSyncer(settings, source).push([runs[1]])  # an appended part
    opened = _refresh(s3_bucket, settings, cache)
    assert _cached(cache, source, run_json).read_bytes() == new
    grown = runs[1].log_dir / "progress.csv"
    assert _cached(cache, source, grown).read_bytes() == grown.read_bytes()
    # run.json: one GET; progress.csv: its new part, and the base's last 4 KiB checked as the prefix
    assert opened.requests() == {"head_bucket": 1, "list_objects_v2": LISTINGS, "get_object": 3}


def test_deleted_runs_and_files_leave_the_cache(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A run deleted from the bucket leaves the cache; so does one deleted file of a kept run."""
    source, settings = _store(s3_bucket, tmp_path)
    cache = tmp_path / "cache"
    _refresh(s3_bucket, settings, cache)
    runs = sorted(iter_run_dirs(source), key=lambda r: r.relative)
    client = s3_bucket.boto()
    for key in [k for k in s3_bucket.keys() if runs[0].relative in k]:
        client.delete_object(Bucket=s3_bucket.bucket, Key=key)
    params = runs[1].code_dir / "parameter.json"
    assert _cached(cache, source, params).is_file()
    client.delete_object(Bucket=s3_bucket.bucket, Key=f"lab/{params.relative_to(source).as_posix()}")
    _refresh(s3_bucket, settings, cache)
    assert not any(runs[0].relative in str(p) for p in cache.rglob("*"))
    assert not _cached(cache, source, params).exists()
    assert _cached(cache, source, runs[1].log_dir / "run.json").is_file()
    assert sorted(r.relative for r in iter_run_dirs(cache)) == sorted(r.relative for r in runs[1:])


HOSTILE = [
    "log/../../escape.txt",
    "log/demo/2026/01/01/../../../../../../escape2.txt",
    "log//demo/x",
    "/log/demo/2026/01/01/12-00-00-000000_1.2.3.4/abs.txt",
    "log/demo/2026/01/01/x\x1b[31m/a",
    "log/demo/2026/01/01/12-00-00-000001_1.2.3.4/..",
    "archive_tester/../../escape3.json",
    "log/demo/2026/01/01/12-00-00-000002_1.2.3.4/sub/../../../../../../../escape4.txt",
    "code/demo/2026/01/01/12-00-00-000003_1.2.3.4/\x9bevil.py",
]


def test_hostile_keys_are_refused(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Crafted keys write nothing outside the cache, are reported, and the good runs still list."""
    source, settings = _store(s3_bucket, tmp_path)
    client = s3_bucket.boto()
    for key in HOSTILE:
        client.put_object(Bucket=s3_bucket.bucket, Key=f"lab/{key}", Body=b"pwned")
    cache = tmp_path / "deep" / "cache"
    warnings: List[str] = []
    _refresh(s3_bucket, settings, cache, warnings)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.read_bytes() == b"pwned"]
    assert written == []
    assert len(warnings) >= 5 and all("skipped" in w for w in warnings)
    assert len(list_runs(cache)) == 3


def test_a_recent_refresh_is_trusted_for_max_age_seconds(
    s3_bucket: S3Box, tmp_path: Path, monkeypatch
) -> None:
    """Within max_age no connection is made; with 0 the store is listed again; a bad value is refused."""
    source, settings = _store(s3_bucket, tmp_path, runs=1)
    cache = tmp_path / "cache"
    _refresh(s3_bucket, settings, cache)

    def no_connection() -> Any:
        raise AssertionError("the store was asked although the cache is fresh")

    url = f"s3://{s3_bucket.bucket}/lab"
    open_data_root(url, settings=settings, cache=cache, connect=no_connection, max_age=3600)
    monkeypatch.setenv("RLA_REMOTE_MAX_AGE", "3600")
    open_data_root(url, settings=settings, cache=cache, connect=no_connection)
    monkeypatch.setenv("RLA_REMOTE_MAX_AGE", "0")
    assert _refresh(s3_bucket, settings, cache).requests()["list_objects_v2"] == LISTINGS
    monkeypatch.setenv("RLA_REMOTE_MAX_AGE", "soon")
    with pytest.raises(ConfigError):
        open_data_root(url, settings=settings, cache=cache, connect=no_connection)
    (cache / STATE_FILE).write_text("{not json")  # a damaged record: listed and checked again
    monkeypatch.delenv("RLA_REMOTE_MAX_AGE")
    assert _refresh(s3_bucket, settings, cache, max_age=3600).requests()["list_objects_v2"] == LISTINGS


def test_an_object_replaced_after_the_listing_is_not_read(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A read of a listed file asks for the listed version (If-Match): a replaced object is gone, not mixed."""
    settings = s3_bucket.settings(prefix="lab")
    client = s3_bucket.boto()
    client.put_object(Bucket=s3_bucket.bucket, Key="lab/d/f.txt", Body=b"old content")
    with open_transport(settings) as transport:
        assert [rel for rel, _ in transport.walk("/d")] == ["f.txt"]
        client.put_object(Bucket=s3_bucket.bucket, Key="lab/d/f.txt", Body=b"NEW CONTENT")
        with pytest.raises(RemoteFileError):
            transport.read("/d/f.txt", io.BytesIO(), 0)
        list(transport.walk("/d"))  # listed again: the new version is read
        sink = io.BytesIO()
        transport.read("/d/f.txt", sink, 0)
        assert sink.getvalue() == b"NEW CONTENT"
        list(transport.walk("/d"))
        transport.write("/d/f.txt", io.BytesIO(b"written once"), 0, 12)  # a change through the transport ...
        sink = io.BytesIO()
        transport.read("/d/f.txt", sink, 0)  # ... is read back, not the listing's version
        assert sink.getvalue() == b"written once"
        transport.write("/d/h.txt", io.BytesIO(b"renamed"), 0, 7)
        list(transport.walk("/d"))
        transport.rename("/d/h.txt", "/d/f.txt")
        sink = io.BytesIO()
        transport.read("/d/f.txt", sink, 0)
        assert sink.getvalue() == b"renamed"


def test_the_listing_is_one_request_per_1000_keys(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A run of 1,100 log files: the warm refresh sends two pages for log, one for code, archive_tester and arc/.

    The first and the last of the 1,100 keys (one on each page) are fetched by the cold refresh;
    the 1,098 between them are over the refresh's ``max_file_size``: listed, not downloaded (the
    listing is under test; 1,100 GETs of one run, made one after the other, cost ~20 s).
    """
    source, settings = _store(s3_bucket, tmp_path, runs=1)
    run = next(iter(iter_run_dirs(source)))
    base = f"lab/{run.log_dir.relative_to(source).as_posix()}/many"
    bodies = {i: b"%d" % i if i in (0, 1099) else b"x" * 64 for i in range(1100)}
    s3_bucket.put_many({f"{base}/f{i:04d}.txt": body for i, body in bodies.items()})  # upload not under test
    capped = s3_bucket.settings(prefix="lab", max_file_size=32)
    cache = tmp_path / "cache"
    _refresh(s3_bucket, capped, cache)
    many = cache / run.log_dir.relative_to(source) / "many"
    assert sorted(p.name for p in many.iterdir()) == ["f0000.txt", "f1099.txt"]
    assert (many / "f1099.txt").read_bytes() == b"1099"
    assert _refresh(s3_bucket, capped, cache).requests() == {
        "head_bucket": 1,
        "list_objects_v2": LISTINGS + 1,
    }


def test_a_settled_run_changed_on_the_store_is_seen_at_once(s3_bucket: S3Box, tmp_path: Path) -> None:
    """The refresh tells the index which cached runs it rewrote: a finished run's new run.json is not trusted away."""
    import json
    import subprocess
    import sys

    source, settings = _store(s3_bucket, tmp_path, runs=2)
    cache = tmp_path / "cache"
    _refresh(s3_bucket, settings, cache)
    runs = sorted(iter_run_dirs(source), key=lambda r: r.relative)
    assert set(list_runs(cache)["status"]) == {"finished"}  # the index now trusts both settled runs
    meta = json.loads((runs[0].log_dir / "run.json").read_text())
    meta["status"] = "crashed"
    key = f"lab/{(runs[0].log_dir / 'run.json').relative_to(source).as_posix()}"
    s3_bucket.boto().put_object(Bucket=s3_bucket.bucket, Key=key, Body=json.dumps(meta).encode())
    with open(runs[1].log_dir / "progress.csv", "a") as handle:  # grown in place in the cache (a tail fetch)
        handle.write("30,1000.0\n")
    RunSyncer(settings, source).push([runs[1]])
    _refresh(s3_bucket, settings, cache)
    code = (
        "import sys, json; from RLA.query import list_runs; f = list_runs(sys.argv[1]); "
        "print(json.dumps(dict(zip(f['index'], zip(f['status'], f['n_rows'].astype(int))))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(cache)], capture_output=True, text=True, timeout=120, check=True
    ).stdout  # a new process: it trusts what the index says is settled
    status = json.loads(out.strip().splitlines()[-1])
    assert status == {runs[0].index: ["crashed", 30], runs[1].index: ["finished", 31]}
