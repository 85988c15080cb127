"""`rla ui --data-root s3://bucket/prefix`: the dashboard's API lists the runs of the store (no browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
from s3_server import S3Box
from test_s3_catalog import make_source

from RLA.sync.syncer import RunSyncer

pytestmark = pytest.mark.timeout(180)


def test_the_dashboard_lists_the_runs_of_a_bucket(s3_bucket: S3Box, tmp_path: Path, monkeypatch) -> None:
    """The data root `rla ui` serves for an s3:// URL answers /api/runs and /api/run/<index> like the store's runs."""
    pytest.importorskip("httpx", reason="starlette's TestClient needs httpx (test extra)")
    from starlette.testclient import TestClient

    import RLA.ui.server
    from RLA.ui.app import create_app
    from rla_scripts.cli import main

    source = tmp_path / "src"
    runs = make_source(source)
    RunSyncer(s3_bucket.settings(prefix="lab"), source).push(runs)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_bucket.endpoint)
    monkeypatch.setenv("RLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    served: Dict[str, Any] = {}

    def serve(data_root: Any, plan: Any, open_browser: bool = False) -> None:
        served["root"] = Path(data_root)  # instead of blocking on uvicorn

    monkeypatch.setattr(RLA.ui.server, "serve", serve)
    assert main(["ui", "--data-root", f"s3://{s3_bucket.bucket}/lab"]) == 0
    assert served["root"].is_relative_to(tmp_path / "cache")
    with TestClient(create_app(served["root"]), base_url="http://127.0.0.1:8765") as client:
        page = client.get("/api/runs", params={"limit": 50}).json()
        assert page["total"] == len(runs)
        assert {row["index"] for row in page["rows"]} == {run.index for run in runs}
        demo = next(run for run in runs if run.task == "demo")
        one = client.get(f"/api/run/{demo.index}").json()
        assert one["hyper_params"]["seed"] == 1 and one["metrics"]["return"]["last"] == pytest.approx(19.5)
