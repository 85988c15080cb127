"""Crafted catalog entries on the store (written by any worker with store access) read by a cache.

Each case plants one catalog object in moto's S3 server (fixtures in s3_server.py) and opens
the store: the refresh ends with a CatalogError (an RLAError naming the catalog), never a raw
Python error, and nothing is written outside the cache.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict

import pytest
from s3_server import S3Box
from test_s3_catalog import frame_of, make_source, open_index

from RLA.errors import RLAError
from RLA.sync.store_catalog import CatalogError
from RLA.sync.syncer import RunSyncer

pytestmark = pytest.mark.timeout(120)

RUN = "demo/2026/01/01/10-00-00-000000"
GOOD: Dict[str, Any] = {"stamp": 9e9, "texts": {}, "progress": None, "progress_mtime": None, "fetch": []}
INFO = json.dumps({"status": "finished"})


def _plant(box: S3Box, body: Any) -> None:
    data = gzip.compress(json.dumps(body).encode())
    key = "lab/.rla-catalog/entries/9999999999999999999-00000000000000ab.json.gz"
    box.boto().put_object(Bucket=box.bucket, Key=key, Body=data)


def _entry(**fields: Any) -> Dict[str, Any]:
    return {"version": 1, "runs": {RUN: {**GOOD, "texts": {"log/run.json": [INFO, 1.0]}, **fields}}}


CASES = {
    "a row count beyond SQLite's integers": _entry(
        progress={"n_rows": 10**30, "time_step": 1, "metrics": {"r": [1, 1, 1]}}
    ),
    "a file time beyond the clock": _entry(texts={"log/run.json": [INFO, 1e300]}, fetch=["log/progress.csv"]),
    "a metric named by a lone surrogate": _entry(
        progress={"n_rows": 1, "time_step": 1, "metrics": {"\ud800": [1, 1, 1]}}
    ),
    "a task named by a lone surrogate": {"version": 1, "runs": {"\ud800/2026/01/01/10-00-00-000000": GOOD}},
    # its index key "arc:demo/..." is the key of the archived run demo/...: read back as that run
    "a task that spells an archived run's key": {
        "version": 1,
        "runs": {"arc:demo/2026/01/01/10-00-00-000000": {**GOOD, "texts": {"log/run.json": [INFO, 1.0]}}},
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_crafted_entry_is_a_catalog_error(s3_bucket: S3Box, tmp_path: Path, case: str) -> None:
    """A value no push writes and the cache or index cannot hold: a CatalogError, never a raw
    Python error from the file system or SQLite; nothing beside the cache."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    _plant(s3_bucket, CASES[case])
    cache = tmp_path / "deep" / "cache"
    with pytest.raises(CatalogError) as info:
        frame_of(open_index(s3_bucket, settings, cache))
    assert isinstance(info.value, RLAError) and "catalog" in str(info.value)
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["cache"]


LONG = {
    "a path longer than the file system takes": "/".join(["t" * 200] * 25) + "/2026/01/01/10-00-00-000000",
    "a task of thousands of folders": "/".join(["t"] * 3000) + "/2026/01/01/10-00-00-000000",
}


@pytest.mark.parametrize("case", sorted(LONG))
def test_a_run_place_too_long_for_the_cache_is_a_catalog_error(
    s3_bucket: S3Box, tmp_path: Path, case: str
) -> None:
    """No OSError (name too long) nor RecursionError while its folders are made; nothing beside the cache."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    _plant(s3_bucket, {"version": 1, "runs": {LONG[case]: {**GOOD, "texts": {"log/run.json": [INFO, 1.0]}}}})
    cache = tmp_path / "deep" / "cache"
    with pytest.raises(CatalogError):
        frame_of(open_index(s3_bucket, settings, cache))
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["cache"]


def _damage(state: Dict[str, Any], how: str) -> None:
    """Damage one part of the cache's record of what it read (``.rla_catalog.json``)."""
    if how == "a stored run of one value":
        state["stored"]["runs"] = {k: v[:1] for k, v in state["stored"]["runs"].items()}
        state["stored"]["generation"] = -1  # compared with the index's rows
    elif how == "an applied stamp that is not a number":
        state["applied"] = {k: None for k in state["applied"]}
        state["objects"] = {}  # every object read again: its runs compared with their stamps
    elif how == "an object read without its runs":
        state["objects"] = {k: {"etag": v["etag"]} for k, v in state["objects"].items()}
    elif how == "an object whose runs are not names":
        state["objects"] = {k: {"etag": v["etag"], "runs": [{}]} for k, v in state["objects"].items()}


DAMAGES = [
    "a stored run of one value",
    "an applied stamp that is not a number",
    "an object read without its runs",
    "an object whose runs are not names",
]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_record_of_the_cache_is_read_again(s3_bucket: S3Box, tmp_path: Path, how: str) -> None:
    """The cache's record damaged (by hand, another version): the next refresh reads the
    catalog again and lists the store's runs, never a raw Python error."""
    from RLA.layout import iter_run_dirs
    from RLA.query.testing import make_run
    from RLA.sync.catalog_read import STATE_FILE

    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    cache = tmp_path / "cache"
    frame_of(open_index(s3_bucket, settings, cache))
    state = json.loads((cache / STATE_FILE).read_text())
    _damage(state, how)
    (cache / STATE_FILE).write_text(json.dumps(state))
    before = set(iter_run_dirs(source))
    make_run(source, task="demo", params={"seed": 77})
    RunSyncer(settings, source).push([run for run in iter_run_dirs(source) if run not in before])
    assert frame_of(open_index(s3_bucket, settings, cache)).equals(frame_of(source))


@pytest.mark.parametrize("planted", ["log/run.json", "log/progress.csv"])
def test_a_file_of_the_cache_planted_as_a_link_is_replaced_not_followed(
    s3_bucket: S3Box, tmp_path: Path, planted: str
) -> None:
    """A run read from files (its entry names one to fetch): a link planted at one of its
    files in the cache between two reads is replaced by the file (a text of the entry) or
    refused (an UnsafePathError, for a download); its target is untouched either way."""
    from RLA.errors import UnsafePathError

    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    _plant(s3_bucket, _entry(fetch=["log/progress.csv"]))
    cache, outside = tmp_path / "cache", tmp_path / "outside.txt"
    outside.write_text("keep")
    link = cache / "log" / RUN / planted.partition("/")[2]
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    try:
        frame_of(open_index(s3_bucket, settings, cache))
        assert not link.is_symlink()
    except UnsafePathError:
        assert planted == "log/progress.csv"
    assert outside.read_text() == "keep"
