"""Benchmark of sync to an S3 store (moto's server on 127.0.0.1): RLA's s3 transport vs a naive s3fs.put.

    python -m bench.bench_s3 --runs 200     # the SFTP bench's workload (bench/bench_sync.py)
    python -m bench.bench_s3 --list-runs 2000   # list_runs on a store of 2,000 runs only

Workload (same runs as bench_sync): N runs of ~110 kB pushed once; then 10 runs grow by 1 %
(progress.csv, log.txt, events) and are pushed again; then a push with nothing changed; a
pull of everything into an empty folder; ``list_runs`` on the store through
``--data-root s3://`` as ``rla list`` reads it, from the store's catalog (cold: empty
cache; warm: nothing pushed since). The naive
method re-uploads the whole tree with ``s3fs.put(recursive=True)`` at each sync. RLA's SFTP
numbers are read from ``bench/results/sync.json`` (measured by bench_sync on this machine).
moto runs in its own process (``python -m moto.server``) so it does not share the GIL.
Writes ``bench/results/s3.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from bench.bench_sync import TYPES, free_port, grow, make_run, tree_bytes, wait_port

RESULTS = Path(__file__).resolve().parent / "results" / "s3.json"
SFTP_RESULTS = Path(__file__).resolve().parent / "results" / "sync.json"
LIST_RESULTS = Path(__file__).resolve().parent / "results" / "s3_list.json"


def _start_moto(work: Path) -> subprocess.Popen:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=open(work / "moto.log", "wb"),
    )
    wait_port(port, timeout=30)
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    return proc


def _timed(fn: Any) -> Dict[str, Any]:
    start = time.perf_counter()
    out = fn()
    return {"seconds": round(time.perf_counter() - start, 3), "result": out}


def _sftp_rows() -> Dict[str, Any]:
    try:
        rows = json.loads(SFTP_RESULTS.read_text())["rows"]
    except (OSError, ValueError, KeyError):
        return {}
    return {row["method"]: row for row in rows}


def _catalog_bytes(bucket: str, prefix: str) -> int:
    """Bytes of the store's catalog objects now (a push's catalog upload is the growth of this)."""
    import boto3

    pages = (
        boto3.client("s3")
        .get_paginator("list_objects_v2")
        .paginate(Bucket=bucket, Prefix=f"{prefix}/.rla-catalog/")
    )
    return sum(int(item["Size"]) for page in pages for item in page.get("Contents", ()))


def _upload_tree(data: Path, bucket: str, prefix: str, threads: int = 32) -> int:
    """Every file of the synced data types to ``prefix/<same path>`` by plain PUTs (threads); returns the count."""
    import concurrent.futures

    import boto3

    client = boto3.client("s3")
    files = [p for t in TYPES if (data / t).exists() for p in (data / t).rglob("*") if p.is_file()]

    def put(path: Path) -> None:
        client.put_object(
            Bucket=bucket, Key=f"{prefix}/{path.relative_to(data).as_posix()}", Body=path.read_bytes()
        )

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(put, files))
    return len(files)


def _spread(samples: List[float]) -> Dict[str, Any]:
    """Median, min and max of timed repetitions (seconds)."""
    ordered = sorted(samples)
    return {
        "median": round(statistics.median(ordered), 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
        "n": len(ordered),
    }


def _repeat(fn: Any, times: int, before: Any = None) -> Dict[str, Any]:
    """Wall time of ``times`` calls, and this process's CPU time (``cpu``; moto's is not in it)."""
    samples, cpu = [], []
    for _ in range(times):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {**_spread(samples), "cpu": _spread(cpu)}


def _publish_catalog(data: Path, url: str) -> int:
    """The store's catalog for runs put there by plain PUTs: what RLA's pushes would have published."""
    from RLA.layout import iter_run_dirs
    from RLA.sync import open_transport
    from RLA.sync.catalog_publish import for_push
    from RLA.sync.remote_root import settings_for
    from RLA.sync.syncer import RunSyncer

    settings = settings_for(url)
    syncer = RunSyncer(settings, data)
    runs = list(iter_run_dirs(data))
    publisher = for_push(syncer, runs, False)
    assert publisher is not None
    with open_transport(settings) as transport:
        publisher.publish(transport)
    return len(runs)


def _cli_bench(url: str, cache_root: Path, warm_reps: int) -> Dict[str, Any]:
    """``rla list --data-root s3://...`` in a new process each time (imports, a new S3 session, the table printed)."""
    env = {**os.environ, "RLA_CACHE_DIR": str(cache_root)}

    def cli() -> None:
        command = [sys.executable, "-m", "rla_scripts.cli", "list", "--data-root", url, "--format", "csv"]
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, timeout=600)

    return {"cli_cold": _repeat(cli, 1), "cli_warm": _repeat(cli, warm_reps)}


def list_bench(runs: int, cold_reps: int = 3, warm_reps: int = 5) -> Dict[str, Any]:
    """``list_runs`` on ``s3://`` with ``runs`` runs in the store, as ``rla list`` reads it (files=False).

    The store is filled by plain threaded PUTs of the same tree (keys as RLA's push writes
    them; pushing 2,000 runs through moto would take ~10 minutes and measures the push), then
    the catalog those pushes would have published is published once. Cold: an empty cache
    (and no index) each repetition; warm: nothing changed on the store since the last refresh.
    Imports (s3fs, pandas) are done before timing.
    """
    import shutil

    import boto3
    import s3fs  # noqa: F401 - imported before timing

    from RLA.query import list_runs
    from RLA.sync.remote_root import open_data_root

    work = Path(tempfile.mkdtemp(prefix="rla-bench-s3-list-"))
    moto = _start_moto(work)
    try:
        boto3.client("s3").create_bucket(Bucket="bench")
        rng = random.Random(0)
        data = work / "data"
        for i in range(runs):
            make_run(data, i, rng)
        out: Dict[str, Any] = {
            "runs": runs,
            "store_bytes": tree_bytes(data),
            "cpus": os.cpu_count(),
            "load_before": os.getloadavg(),
        }
        out["fill_store"] = _timed(lambda: _upload_tree(data, "bench", "rla"))
        url, cache = "s3://bench/rla", work / "cache"
        out["publish_catalog"] = _timed(lambda: _publish_catalog(data, url))
        if os.environ.get("RLA_BENCH_LIST_LOCAL", "1") != "0":  # the query alone, on local disk (reference)
            out["list_local"] = _timed(lambda: len(list_runs(data)))

        def listed() -> None:
            assert len(list_runs(open_data_root(url, cache=cache, files=False))) == runs

        out["list_cold"] = _repeat(listed, cold_reps, before=lambda: shutil.rmtree(cache, ignore_errors=True))
        out["list_warm"] = _repeat(listed, warm_reps)
        out["refresh_warm"] = _repeat(lambda: open_data_root(url, cache=cache, files=False), warm_reps)
        out["query_on_cache"] = _repeat(lambda: len(list_runs(cache)), warm_reps)  # the warm query alone
        out.update(_cli_bench(url, work / "cli-cache", warm_reps))
        out["load_after"] = os.getloadavg()
        return out
    finally:
        moto.terminate()
        moto.wait(timeout=30)


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument(
        "--list-runs",
        type=int,
        default=0,
        help="only measure list_runs on a store of this many runs (writes s3_list.json)",
    )
    args = parser.parse_args(argv)
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench-secret",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
    )
    if args.list_runs:
        listed = list_bench(args.list_runs)
        LIST_RESULTS.write_text(json.dumps(listed, indent=1) + "\n")
        print(json.dumps(listed, indent=1))
        return 0
    import boto3
    import s3fs

    from RLA.config.fields import validate_section
    from RLA.config.remote import RemoteSettings
    from RLA.layout import iter_run_dirs
    from RLA.query import list_runs
    from RLA.sync.remote_root import open_data_root
    from RLA.sync.syncer import RunSyncer

    work = Path(tempfile.mkdtemp(prefix="rla-bench-s3-"))
    moto = _start_moto(work)
    try:
        boto3.client("s3").create_bucket(Bucket="bench")
        rng = random.Random(0)
        data = work / "data"
        for i in range(args.runs):
            make_run(data, i, rng)
        settings = validate_section(
            RemoteSettings,
            {"file_transfer_protocol": "s3", "bucket": "bench", "prefix": "rla", "retries": 0},
            "<bench>",
        )
        syncer = RunSyncer(settings, data)
        fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)

        def naive() -> int:
            fs.put([str(data / t) for t in TYPES if (data / t).exists()], "bench/naive/", recursive=True)
            return tree_bytes(data)

        runs = list(iter_run_dirs(data))
        out: Dict[str, Any] = {"runs": args.runs, "initial_bytes": tree_bytes(data)}
        out["rla_initial"] = _timed(lambda: syncer.push(runs).bytes_sent)
        out["naive_initial"] = _timed(naive)
        appended = grow(data, list(range(0, args.runs, max(1, args.runs // 10)))[:10], rng)
        out["appended_bytes"] = appended
        before = _catalog_bytes("bench", "rla")
        out["rla_growth"] = _timed(lambda: syncer.push(runs).bytes_sent)  # the files' bytes
        out["rla_growth"]["catalog_bytes"] = _catalog_bytes("bench", "rla") - before  # + its catalog entries
        out["naive_growth"] = _timed(naive)
        out["rla_no_change"] = _timed(lambda: syncer.push(runs).bytes_sent)
        out["rla_pull"] = _timed(lambda: RunSyncer(settings, work / "pulled").pull().bytes_received)
        cache = work / "cache"
        url = "s3://bench/rla"
        # as `rla list` reads the store (the catalog; curves stay there)
        out["list_cold"] = _timed(lambda: len(list_runs(open_data_root(url, cache=cache, files=False))))
        out["list_warm"] = _timed(lambda: len(list_runs(open_data_root(url, cache=cache, files=False))))
        out["sftp"] = _sftp_rows().get("RLA sftp", {})
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps(out, indent=1))
    finally:
        moto.terminate()
        moto.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
