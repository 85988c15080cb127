"""The S3 transport against moto's S3 server on 127.0.0.1: what only an object store needs.

Hostile keys on pull, the byte budget of growing logs (parts and compaction), requests of
an unchanged pull, kills at fixed points of a push, credentials never written, and the
refusal of credentials in rla_config.yaml. The shared contract runs in test_transport_contract.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from RLA.errors import ConfigError
from RLA.sync import open_transport
from RLA.sync.s3_parts import MAX_PARTS, PARTS_SUFFIX
from RLA.sync.syncer import RunSyncer
from s3_server import ACCESS_KEY, SECRET_KEY, S3Box, S3Target
from sync_helpers import RUN_NAMES, TASK, settings, tree

pytestmark = pytest.mark.timeout(180)
DAY = f"lab/db/log/{TASK}/2026/03/04"


def _view(box: S3Box, tmp_path: Path) -> Dict[str, bytes]:
    """What a reader of the store sees below /db (parts joined), as relative path → bytes."""
    return tree(S3Target(box, tmp_path).root_on_disk)


def test_crafted_keys_never_write_outside_the_data_root(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """Keys with '..', '//', an absolute name, control characters or crafted parts: skipped, the good run arrives."""
    run = make_run()
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    RunSyncer(remote, tmp_path / "data").push([run])
    box = tmp_path / "box"
    (box / "sentinel").mkdir(parents=True)
    data = box / "data"
    crafted = [f"{DAY}/{RUN_NAMES[0]}/../../../../../../../../sentinel/x.txt",
               f"{DAY}/{RUN_NAMES[0]}//abs.txt", f"/{DAY}/{RUN_NAMES[0]}/slash.txt",
               f"{DAY}/{RUN_NAMES[0]}/bad\nname.txt", f"{DAY}/{RUN_NAMES[0]}/ctl\x1b.txt",
               f"{DAY}/{RUN_NAMES[0]}/tab\tname.txt", f"{DAY}/{RUN_NAMES[0]}/del\x7f.txt",
               f"{DAY}/10-00-00-000009_&x=/../../../../../../../sentinel/p.csv",
               f"{DAY}/{RUN_NAMES[0]}/progress.csv{PARTS_SUFFIX}/../../../../../../../../../sentinel/y",
               f"{DAY}/{RUN_NAMES[0]}/log.txt{PARTS_SUFFIX}/000000000000-000000000000000-6",
               f"lab/db/log/{TASK}/2026/03/../../../../../../sentinel/z", f"lab/db/log/{TASK}/2026/03/04/./q"]
    client = s3_bucket.boto()
    for key in crafted:
        try:
            client.put_object(Bucket=s3_bucket.bucket, Key=key, Body=b"owned\n")
        except Exception:  # noqa: BLE001 - moto's HTTP layer cannot take a newline in a key
            assert "\n" in key, key
    warnings: List[str] = []
    report = RunSyncer(remote, data, warn=warnings.append).pull()
    assert list((box / "sentinel").iterdir()) == []
    assert sorted(p.name for p in box.iterdir()) == ["data", "sentinel"]
    for path in data.rglob("*"):
        assert all(ord(c) >= 0x20 for c in path.name), path
        if path.is_file():
            assert b"owned" not in path.read_bytes(), path
    assert tree(data) == tree(tmp_path / "data")  # the good run, byte for byte (a stale part is ignored)
    assert report.files_received == 8
    joined = "\n".join(warnings)
    for name in ("abs.txt", "ctl\\x1b.txt", "tab\\tname.txt", "del\\x7f.txt"):
        assert name in joined, name


def test_walk_yields_only_plain_names(s3_bucket: S3Box) -> None:
    """The transport's own listing refuses each crafted key (reported whole) before pull sees it."""
    client = s3_bucket.boto()
    good = ["lab/db/a/b.txt", "lab/db/a/c/d.txt"]
    bad = ["lab/db/a/../../x", "lab/db/a//e", "lab/db/./f", "lab/db/a/ctl\x1b", "lab/db/a/g/..", "lab/db/a/tab\th"]
    for key in good + bad:
        client.put_object(Bucket=s3_bucket.bucket, Key=key, Body=b"x")
    refused: List[str] = []
    with open_transport(s3_bucket.settings(prefix="lab")) as transport:
        found = sorted(rel for rel, _ in transport.walk("/db", refuse=lambda rel, why: refused.append(rel)))
    assert found == ["a/b.txt", "a/c/d.txt"]
    assert sorted(refused) == sorted(key[len("lab/db/"):] for key in bad)


def test_a_base_replaced_by_another_tool_hides_the_old_parts(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """Parts belong to one version of the base (its ETag): a base overwritten by `aws s3 cp` shows alone."""
    run = make_run()
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    syncer = RunSyncer(remote, tmp_path / "data")
    syncer.push([run])
    log = run.log_dir / "log.txt"
    old = log.read_bytes()
    _dump(run, 1)
    syncer.push([run])  # log.txt is now its base + one part starting at len(old)
    key = next(k for k in s3_bucket.keys() if k.endswith("/log.txt"))
    replaced = b"R" * len(old)  # same length: the old part would continue it exactly
    s3_bucket.boto().put_object(Bucket=s3_bucket.bucket, Key=key, Body=replaced)
    view = _view(s3_bucket, tmp_path)
    assert view[next(rel for rel in view if rel.endswith("/log.txt"))] == replaced


def _dump(run, step: int) -> None:
    """One logger dump: a progress row, a log line (as the real logger writes them)."""
    with open(run.log_dir / "progress.csv", "ab") as csv:
        csv.write(f"{step},{step * 0.37:.6f},{1 / (step + 1):.6f},{step % 7}\n".encode())
    with open(run.log_dir / "log.txt", "ab") as log:
        log.write(f"| time-step {step:>6} | reward {step * 0.37:>12.6f} | loss {1 / (step + 1):>10.6f} |\n".encode())


def test_a_growing_run_uploads_at_most_three_times_its_final_size(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """980 dumps synced every 14: uploaded bytes <= 3x the run's final size; parts stay few; reader view exact.

    70 pushes: more than MAX_PARTS (64) appends, so a store that never compacted would fail the parts check.
    """
    run = make_run(size=200)
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    session = open_transport(remote)  # one s3fs session for the 70 pushes (each push gets a fork)
    syncer = RunSyncer(remote, tmp_path / "data", connect=session.fork)
    sent, pushes = 0, 0
    for step in range(980):
        _dump(run, step)
        if step % 14 == 13:
            sent += syncer.push([run]).bytes_sent
            pushes += 1
    assert pushes > MAX_PARTS
    final = sum(len(v) for v in tree(tmp_path / "data").values())
    assert sent <= 3 * final, (sent, final)
    keys = s3_bucket.keys()
    for name in ("progress.csv", "log.txt"):
        parts = [k for k in keys if f"/{name}{PARTS_SUFFIX}/" in k]
        assert len(parts) < MAX_PARTS, (name, len(parts))
    assert _view(s3_bucket, tmp_path) == tree(tmp_path / "data")


def test_an_unchanged_pull_costs_listings_only(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """After a pull, pulling again lists (and HEADs each run's state file): no GET, no PUT."""
    for name in RUN_NAMES:
        make_run(name)
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    from RLA.layout import iter_run_dirs

    RunSyncer(remote, tmp_path / "data").push(list(iter_run_dirs(tmp_path / "data")))
    opened = []

    def connect():
        opened.append(open_transport(remote))
        return opened[-1]

    RunSyncer(remote, tmp_path / "pulled", connect=connect).pull()
    assert opened[-1].requests.get("get_object", 0) >= 16
    report = RunSyncer(remote, tmp_path / "pulled", connect=connect).pull()
    assert report.bytes_received == 0 and report.runs == 2
    used = opened[-1].requests
    assert set(used) <= {"head_bucket", "list_objects_v2", "head_object"}, used  # nothing read, nothing written
    assert used["head_object"] <= len(RUN_NAMES)  # the archive_tester state's time and mode
    assert used["list_objects_v2"] <= 6 * 4 + 4 * len(RUN_NAMES)  # the levels down to the days, then per run


def test_an_append_costs_three_requests(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """Appending to a log: the size check (HEAD + list of parts) and one PUT of the new bytes per file,
    plus the store's catalog: one entries PUT, two listings of the catalog, the generation read and rewritten."""
    run = make_run()
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    opened = []

    def connect():
        opened.append(open_transport(remote))
        return opened[-1]

    syncer = RunSyncer(remote, tmp_path / "data", connect=connect, channels=1)
    syncer.push([run])
    _dump(run, 1)
    report = syncer.push([run])
    assert report.files_appended == 2 and report.files_sent == 0
    used = dict(opened[-1].requests)
    catalog = {"list_objects_v2": 2, "put_object": 2, "get_object": 1}
    files = {"head_bucket": 1, "head_object": 2, "list_objects_v2": 2, "put_object": 2}
    assert used == {k: files.get(k, 0) + catalog.get(k, 0) for k in {*files, *catalog}}, used


_CHILD = """
import json, sys
from RLA.config.fields import validate_section
from RLA.config.remote import RemoteSettings
from RLA.layout import RunLayout
from RLA.sync.syncer import RunSyncer
spec = json.loads(sys.argv[1])
settings = validate_section(RemoteSettings, spec["settings"], "<child>")
run = RunLayout(__import__("pathlib").Path(spec["root"]), *spec["run"])
RunSyncer(settings, spec["root"]).push([run])
"""


def _killed_push(box: S3Box, run, root: Path, point: str, env: dict) -> None:
    raw = dict(file_transfer_protocol="s3", bucket=box.bucket, prefix="lab", remote_data_root="/db",
               endpoint_url=box.endpoint, region="us-east-1", retries=0, timeout=10.0)
    spec = {"settings": raw, "root": str(root), "run": [run.task, run.date, run.name]}
    child_env = dict(env, RLA_FAULT=f"sync.s3:{point}")
    child_env.update({k: v for k, v in os.environ.items() if k.startswith("AWS_")})
    child = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], env=child_env, timeout=120)
    assert child.returncode == -signal.SIGKILL, f"the fault point {point} was never reached"


def _complete_versions(view: Dict[str, bytes], local: Dict[str, bytes], growing: Dict[str, bytes]) -> None:
    """Every file a reader sees is a whole version: the old one, the new one, or (logs) a prefix of it."""
    for rel, data in view.items():
        assert not rel.endswith(".rla-part") or rel.rsplit("/", 1)[1].startswith("."), rel
        if rel.endswith(".rla-part"):
            continue
        assert data == local.get(rel) or data == growing.get(rel) or (
            rel in local and local[rel].startswith(data)), rel


@pytest.mark.parametrize("point", ["piece-sent", "part-published", "renamed"])
def test_a_push_killed_at_a_fault_point_completes_next_time(point, s3_bucket, make_run, tmp_path,
                                                           subprocess_env) -> None:
    """SIGKILL after a piece of a large upload, after a part, after a rename: readers see whole files; the next push finishes."""
    big = os.urandom(20 * 1024 * 1024)
    run = make_run(extra={"results/big.bin": big})
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    before: Dict[str, bytes] = {}
    if point == "part-published":  # the kill lands while a log grows by parts
        RunSyncer(remote, tmp_path / "data").push([run])
        before = _view(s3_bucket, tmp_path)
        for step in range(50):
            _dump(run, step)
    _killed_push(s3_bucket, run, tmp_path / "data", point, subprocess_env)
    local = tree(tmp_path / "data")
    view = _view(s3_bucket, tmp_path)
    _complete_versions(view, local, before)
    big_rel = next(rel for rel in local if rel.endswith("big.bin"))
    if point == "piece-sent":
        assert big_rel not in view  # never a torn object under the real name
    report = RunSyncer(remote, tmp_path / "data").push([run])
    assert _view(s3_bucket, tmp_path) == local
    if point == "piece-sent":
        assert report.bytes_sent < len(big)  # resumed after the first piece, not restarted


def test_a_compaction_killed_before_the_old_parts_are_deleted_shows_no_byte_twice(s3_bucket, make_run, tmp_path,
                                                                                  subprocess_env) -> None:
    """Killed after the new base is published: its generation hides the old parts; the next push cleans up."""
    run = make_run(size=200)
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    syncer = RunSyncer(remote, tmp_path / "data")
    syncer.push([run])
    for step in range(3):
        _dump(run, step)
        syncer.push([run])
    for step in range(3, 400):  # the next append brings the parts over twice the base: a compaction
        _dump(run, step)
    _killed_push(s3_bucket, run, tmp_path / "data", "compacted", subprocess_env)
    local = tree(tmp_path / "data")
    view = _view(s3_bucket, tmp_path)
    _complete_versions(view, local, {})  # a byte shown twice would make a log no prefix of its local copy
    log = next(rel for rel in local if rel.endswith("/log.txt"))
    assert view[log] == local[log]  # the compacted file (sent first): whole, once
    assert any(f"{PARTS_SUFFIX}/" in key for key in s3_bucket.keys())  # the old parts are still there
    syncer.push([run])
    assert _view(s3_bucket, tmp_path) == local


def test_no_credential_is_written_anywhere(s3_bucket: S3Box, make_run, tmp_path: Path) -> None:
    """After push, append and pull, neither key appears in the data roots, the manifests or the bucket (keys, bytes, metadata)."""
    run = make_run()
    remote = s3_bucket.settings(prefix="lab", remote_data_root="/db")
    syncer = RunSyncer(remote, tmp_path / "data")
    syncer.push([run])
    _dump(run, 1)
    syncer.push([run])
    RunSyncer(remote, tmp_path / "pulled").pull()
    secrets = (ACCESS_KEY.encode(), SECRET_KEY.encode())
    for root in (tmp_path / "data", tmp_path / "pulled"):
        for path in root.rglob("*"):
            assert not any(s in str(path).encode() for s in secrets), path
            if path.is_file():
                assert not any(s in path.read_bytes() for s in secrets), path
    client = s3_bucket.boto()
    for key, body in s3_bucket.keys().items():
        meta = json.dumps(client.head_object(Bucket=s3_bucket.bucket, Key=key)["Metadata"]).encode()
        assert not any(s in key.encode() or s in body or s in meta for s in secrets), key
    assert SECRET_KEY not in repr(remote) and ACCESS_KEY not in repr(open_transport(remote))


@pytest.mark.parametrize("key", ["password", "username"])
def test_credentials_in_the_config_are_refused_for_s3(key: str, tmp_path: Path) -> None:
    """REMOTE_SETTING.password (or username) with s3: a ConfigError pointing to the environment, value not shown."""
    with pytest.raises(ConfigError) as info:
        settings(file_transfer_protocol="s3", bucket="b", **{key: "AKIA-or-secret-1234"})
    text = str(info.value)
    assert "AWS_SECRET_ACCESS_KEY" in text and "environment" in text and "AKIA-or-secret-1234" not in text
    from RLA.config import load_config

    (tmp_path / "rla_config.yaml").write_text(f"REMOTE_SETTING:\n  file_transfer_protocol: s3\n  bucket: b\n"
                                              f"  {key}: AKIA-or-secret-1234\n")
    with pytest.raises(ConfigError, match="environment"):
        load_config(tmp_path / "rla_config.yaml")


def test_a_missing_bucket_is_a_clear_error(s3_bucket: S3Box) -> None:
    """A bucket that does not exist: the transport fails at connection time, naming the bucket."""
    with pytest.raises(ConfigError, match="no-such-bucket"):
        open_transport(s3_bucket.settings(bucket="no-such-bucket"))
