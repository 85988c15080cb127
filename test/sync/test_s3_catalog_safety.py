"""The store-side catalog's guarantees: concurrent pushers lose no entry, a killed push leaves
no half state and publishes on the next push, crafted catalog content is refused, and a
rebuilt local index gets its records back.

Against moto's S3 server on 127.0.0.1; interruptions at deterministic fault points
(``RLA.replay_buffer.snapshot.faults.injected``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, List

import pytest
from s3_server import S3Box
from test_s3_catalog import frame_of, make_source, open_index

from RLA.errors import RLAError
from RLA.query.testing import make_run as make_query_run
from RLA.replay_buffer.snapshot import faults
from RLA.sync import catalog_publish, store_catalog
from RLA.sync.store_catalog import CatalogError
from RLA.sync.syncer import RunSyncer

pytestmark = pytest.mark.timeout(180)


class Crash(Exception):
    """Stands for the process dying at a fault point."""


def crash_at(point: str) -> Any:
    def hook(name: str) -> None:
        if name == point:
            raise Crash(name)

    return faults.injected(hook)


def test_concurrent_compactions_lose_no_entry(s3_bucket: S3Box, tmp_path: Path, monkeypatch) -> None:
    """Worker B pushes (and compacts) while worker A compacts: every run of both is listed."""
    monkeypatch.setattr(catalog_publish, "COMPACT_AT", 0)  # every publication compacts
    settings = s3_bucket.settings(prefix="lab")
    a_root, b_root = tmp_path / "a", tmp_path / "b"
    a_runs = [make_query_run(a_root, task="a", params={"seed": i}, curves={"r": [i]}) for i in range(2)]
    b_runs = [make_query_run(b_root, task="b", params={"seed": i}, curves={"r": [i]}) for i in range(2)]
    RunSyncer(settings, a_root).push(a_runs[:1])
    RunSyncer(settings, b_root).push(b_runs[:1])
    fired: List[str] = []

    def hook(name: str) -> None:
        if name == "sync.catalog:shards-published" and not fired:
            fired.append(name)  # A has read and re-published the catalog; B goes now
            RunSyncer(settings, b_root).push(b_runs)

    with faults.injected(hook):
        RunSyncer(settings, a_root).push(a_runs)
    assert fired
    frame = frame_of(open_index(s3_bucket, settings, tmp_path / "cache"))
    assert sorted(frame["task"]) == ["a", "a", "b", "b"]


def test_a_push_killed_before_its_generation_publishes_on_the_next(s3_bucket: S3Box, tmp_path: Path) -> None:
    """Killed after the entries object, before the generation: the next push (no file left to send) publishes."""
    source = tmp_path / "src"
    runs = make_source(source)
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(runs)
    cache = tmp_path / "cache"
    open_index(s3_bucket, settings, cache)
    added = make_query_run(
        source, task="demo", params={"seed": 7, "lr": 0.1, "algo": "sac"}, curves={"return": [2.0]}
    )
    with crash_at("sync.catalog:entries-published"), pytest.raises(Crash):
        RunSyncer(settings, source).push([*runs, added])
    RunSyncer(settings, source).push([*runs, added])  # nothing left to upload: only the catalog
    assert frame_of(open_index(s3_bucket, settings, cache)).equals(frame_of(source))


def test_an_entry_is_published_only_after_the_files_of_its_run(s3_bucket: S3Box, tmp_path: Path) -> None:
    """When the entries object is published, every catalogued run's files are whole on the store."""
    source = tmp_path / "src"
    runs = make_source(source)
    settings = s3_bucket.settings(prefix="lab")
    checked = []

    def hook(name: str) -> None:
        if name == "sync.catalog:entries-published":
            keys = s3_bucket.keys()
            for run in runs:
                for path in (run.log_dir / "progress.csv", run.log_dir / "run.json"):
                    key = f"lab/{path.relative_to(source).as_posix()}"
                    assert keys.get(key) == path.read_bytes(), key
            checked.append(name)

    with faults.injected(hook):
        RunSyncer(settings, source).push(runs)
    assert checked


def test_a_push_that_fails_publishes_nothing(s3_bucket: S3Box, tmp_path: Path, monkeypatch) -> None:
    """Files that could not be pushed: no entry reaches the store (a reader never lists a half run)."""
    from RLA.sync import syncer as syncer_module

    source = tmp_path / "src"
    runs = make_source(source)
    settings = s3_bucket.settings(prefix="lab", retries=0)

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise Crash("upload")

    monkeypatch.setattr(syncer_module, "push_run", broken)
    with pytest.raises(Crash):
        RunSyncer(settings, source).push(runs)
    assert not [key for key in s3_bucket.keys() if ".rla-catalog" in key]


def _plant(box: S3Box, name: str, body: Any) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    data = data[len(RAW) :] if data.startswith(RAW) else gzip.compress(data)
    box.boto().put_object(Bucket=box.bucket, Key=f"lab/.rla-catalog/entries/{name}", Body=data)


RAW = b"raw:"  # planted as it is (not gzip'ed)


GOOD = {"stamp": 9e9, "texts": {}, "progress": None, "progress_mtime": None, "fetch": []}
HOSTILE = {
    "run outside the root": {"version": 1, "runs": {"../../../../escape/2026/01/01/10-00-00-000000": GOOD}},
    "hidden task": {"version": 1, "runs": {".trash/2026/01/01/10-00-00-000000": GOOD}},
    "not a run name": {"version": 1, "runs": {"demo/2026/01/01/..": GOOD}},
    "unknown file key": {
        "version": 1,
        "runs": {"demo/2026/01/01/10-00-00-000000": {**GOOD, "texts": {"log/../../x": ["a", None]}}},
    },
    "fetch outside the run": {
        "version": 1,
        "runs": {"demo/2026/01/01/10-00-00-000000": {**GOOD, "fetch": ["../../etc/passwd"]}},
    },
    "metric of the wrong type": {
        "version": 1,
        "runs": {
            "demo/2026/01/01/10-00-00-000000": {
                **GOOD,
                "progress": {"n_rows": 1, "time_step": 0, "metrics": {"r": ["x", 1, 2]}},
            }
        },
    },
    "text of the wrong type": {
        "version": 1,
        "runs": {"demo/2026/01/01/10-00-00-000000": {**GOOD, "texts": {"log/run.json": [{"a": 1}, None]}}},
    },
    "not JSON": b"\xff\xfe not json",
    "not gzip": RAW + b'{"version": 1, "runs": {}}',
    "a cut gzip stream": RAW + gzip.compress(b'{"version": 1, "runs": {}}')[:-8],
    "inflates past the cap": b" " * 5000 + b'{"version": 1, "runs": {}}',
    "too deep": b"[" * 3000,
    "another version": {"version": 99, "runs": {}},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_crafted_catalog_content_is_refused(s3_bucket: S3Box, tmp_path: Path, case: str, monkeypatch) -> None:
    """Each crafted object: a CatalogError (an RLAError) naming the problem; nothing written outside the cache."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    monkeypatch.setattr(store_catalog, "MAX_OBJECT", 4096)  # "inflates past the cap": 5,000 spaces
    _plant(s3_bucket, "9999999999999999999-00000000000000aa.json.gz", HOSTILE[case])
    cache = tmp_path / "deep" / "cache"
    with pytest.raises(CatalogError) as info:
        open_index(s3_bucket, settings, cache)
    assert isinstance(info.value, RLAError) and "catalog" in str(info.value)
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["cache"]
    assert not (tmp_path / "escape").exists()


def test_keys_that_are_not_catalog_objects_are_ignored(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A stray key below the catalog folder (another name pattern) is not read."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    _plant(s3_bucket, "notes.txt", b"not a catalog object")
    assert frame_of(open_index(s3_bucket, settings, tmp_path / "cache")).equals(frame_of(source))


def test_a_rebuilt_index_gets_the_catalog_records_back(s3_bucket: S3Box, tmp_path: Path) -> None:
    """The local index deleted (rebuilt from the cache, where the curves are not): the metrics come back."""
    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    cache = tmp_path / "cache"
    frame_of(open_index(s3_bucket, settings, cache))
    (cache / ".rla_index.sqlite").unlink()
    frame_of(cache)  # a query rebuilds the index from the cached files alone
    assert frame_of(open_index(s3_bucket, settings, cache)).equals(frame_of(source))


def test_objects_compacted_while_read_are_listed_again(s3_bucket: S3Box, tmp_path: Path, monkeypatch) -> None:
    """A listed catalog object deleted before its download (a compaction meanwhile): the reader lists again."""
    from RLA.sync.catalog_io import CatalogObjects
    from RLA.sync.s3_parts import ObjectInfo

    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source))
    real = CatalogObjects.listed
    calls: List[int] = []

    def listed(self: Any) -> Any:
        calls.append(1)
        found = real(self)
        gone = ObjectInfo(f"{self.base}entries/0000000000000000001-00000000000000ff.json.gz", 10, '"x"')
        return [*found, gone] if len(calls) == 1 else found

    monkeypatch.setattr(CatalogObjects, "listed", listed)
    assert frame_of(open_index(s3_bucket, settings, tmp_path / "cache")).equals(frame_of(source))
    assert len(calls) == 2


def test_a_link_planted_in_the_cache_is_not_followed(s3_bucket: S3Box, tmp_path: Path) -> None:
    """A task folder of the cache replaced by a link to another folder: refused, nothing written there."""
    from RLA.errors import UnsafePathError

    source = tmp_path / "src"
    settings = s3_bucket.settings(prefix="lab")
    RunSyncer(settings, source).push(make_source(source, count=1))
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (cache / "log").mkdir(parents=True)
    (cache / "log" / "demo").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        open_index(s3_bucket, settings, cache)
    assert not list(elsewhere.iterdir())
