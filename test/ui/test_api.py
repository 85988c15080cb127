"""The dashboard's JSON API, through Starlette's TestClient (every endpoint, errors included)."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from demo_data import IMG, IMG_METRIC, SCRIPT


def test_runs_lists_filters_sorts_and_pages(client, demo):
    page = client.get("/api/runs", params={"limit": 5}).json()
    assert page["total"] == 13 and len(page["rows"]) == 5
    assert {"lr", "seed", "algo"} <= set(page["params"]) and "return" in page["metrics"]
    lr = client.get("/api/runs", params={"where": "lr == 1e-4", "column": ["index", "lr", "seed"],
                                         "sort": "seed", "desc": "1"}).json()
    assert lr["total"] == 3 and lr["columns"] == ["index", "lr", "seed"]
    assert [row["seed"] for row in lr["rows"]] == [2, 1, 0]
    second = client.get("/api/runs", params={"limit": 5, "offset": 5, "sort": "index"}).json()
    first = client.get("/api/runs", params={"limit": 5, "sort": "index"}).json()
    assert not {r["index"] for r in first["rows"]} & {r["index"] for r in second["rows"]}


def test_runs_task_status_and_tag_filters(client, demo):
    assert client.get("/api/runs", params={"task": "sac"}).json()["total"] == 1
    crashed = client.get("/api/runs", params={"status": "crashed"}).json()
    assert {r["index"] for r in crashed["rows"]} >= {demo["crashed"]}
    tagged = client.get("/api/runs", params={"tag": "xss"}).json()
    assert [r["index"] for r in tagged["rows"]] == [demo["hostile"]]
    tasks = client.get("/api/tasks").json()["tasks"]
    assert tasks["dqn/CartPole"] == 11 and tasks["sac/Hopper"] == 1


@pytest.mark.parametrize("where, caret", [("lr >> 1", 0), ("lr = 1", 3), ("  seed > 0 and lrr > 1", 15),
                                          ("last('retrun') > 1", 0)])
def test_bad_where_is_a_400_with_the_caret_position(client, where, caret):
    response = client.get("/api/runs", params={"where": where})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "QueryError" and error["position"] == caret and error["fix"]


def test_one_run_has_everything_the_run_page_shows(client, demo):
    run = client.get(f"/api/run/{demo['first']}").json()
    assert run["status"] == "finished" and run["hyper_params"]["lr"] == 1e-3
    assert run["tracked_keys"] == ["lr", "seed"]
    assert "+LR = 0.001" in run["git_diff"]
    assert run["git"]["branch"] == "main"
    assert [Path(c["path"]).name for c in run["checkpoints"]] == ["checkpoint-000050.pt"]
    assert run["checkpoints"][0]["size"] == 2048
    assert [m["kind"] for m in run["media"]] == ["image"]
    assert run["log_tail"].splitlines()[-1].startswith("[059]")
    assert set(run["files"]) >= {"log", "code", "checkpoint", "results"}
    assert run["metrics"]["return"]["last"] == pytest.approx(204.84, abs=0.01)


def test_unknown_or_unsafe_run_index_is_refused(client, demo):
    assert client.get("/api/run/dqn/CartPole/2026/11/20/23-59-59-000000").status_code == 404
    assert client.get("/api/run/no-index").status_code == 404
    assert client.get("/api/run/../../etc/2026/11/20/09-00-00-000000").status_code in (403, 404)


def test_status_reads_run_json_now(client, demo):
    first = demo["first"]
    status = client.get("/api/status", params={"run": [first, demo["crashed"], "dqn/x/2026/01/01/00-00-00-000000"]})
    assert status.json()["status"] == {first: "finished", demo["crashed"]: "crashed"}


def test_compare_lists_only_differing_params_and_the_code_diff(client, demo):
    result = client.get("/api/compare", params={"run": [demo["first"], demo["second"]]}).json()
    assert result["params"] == {"seed": [0, 1]}
    assert "-SEED = 0\n+SEED = 1\n" in result["code_diff"]
    assert client.get("/api/compare", params={"run": [demo["first"]]}).status_code == 400


def test_file_endpoint_serves_inside_the_root_with_scripts_forbidden(client, demo):
    run = client.get(f"/api/run/{demo['first']}").json()
    image = run["media"][0]["path"]
    response = client.get("/api/file", params={"path": image})
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert "sandbox" in response.headers["content-security-policy"]
    page = demo["root"] / "results" / "evil.html"
    page.write_text("<script>alert(1)</script>")
    html = client.get("/api/file", params={"path": "results/evil.html"})
    assert html.headers["content-type"] == "application/octet-stream"
    assert html.headers["content-disposition"].startswith("attachment")


@pytest.mark.parametrize("path", ["../secret.txt", "results/../../secret.txt", "/etc/passwd", "",
                                  "results//x", "results/./x", "..%2Fsecret.txt"])
def test_file_endpoint_refuses_traversal(client, demo, path):
    (demo["root"].parent / "secret.txt").write_text("secret")
    response = client.get("/api/file", params={"path": path})
    assert response.status_code in (403, 404)
    assert b"secret" != response.content


def test_file_endpoint_refuses_symlink_escapes(client, demo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plot.png").write_text("secret")
    (demo["root"] / "results" / "link.png").symlink_to(secret)
    (demo["root"] / "results" / "dir").symlink_to(outside, target_is_directory=True)
    (demo["root"] / "results" / "inside.png").symlink_to(demo["root"] / "log")  # a link, even inside
    for path in ("results/link.png", "results/dir/plot.png", "results/inside.png"):
        response = client.get("/api/file", params={"path": path})
        assert response.status_code == 403, path
        assert response.json()["error"]["type"] == "UnsafePathError"


def test_xss_payloads_come_back_as_the_same_text(client, demo):
    page = client.get("/api/runs", params={"where": "seed == 9", "column": ["index", "algo", "env"]}).json()
    row = page["rows"][0]
    assert row["algo"] == SCRIPT and row["env"] == IMG and row["note"] == SCRIPT + IMG
    assert IMG_METRIC in page["metrics"]
    tasks = client.get("/api/tasks").json()["tasks"]
    assert IMG in tasks
    run = client.get(f"/api/run/{demo['hostile_task']}").json()
    assert run["task"] == IMG
    html = client.get("/").text
    assert "onerror" not in html and "window.__xss" not in html  # the page holds no data


def test_grouped_curves_equal_rla_plot_numbers(client, demo, tmp_path):
    from RLA.plot.plot_func import plot_func

    where = "algo == 'dqn' and seed < 3"
    for agg, band in (("mean", "stderr"), ("iqm", "ci"), ("median", "std")):
        result = plot_func(demo["root"], "dqn/CartPole", ["*"], ["lr"], ["return"], verbose=False, where=where,
                           agg=agg, band_kind=band, resample=64, smooth_step=2.0, save_dir=tmp_path / agg,
                           save_name=f"c-{agg}", formats=("png",))
        expected = list(csv.DictReader(open(next(p for p in result.files if p.name.endswith("-" + agg + ".csv")))))
        api = client.get("/api/curves", params={"task": "dqn/CartPole", "where": where, "metric": "return",
                                                "group": "lr", "agg": agg, "band": band, "resample": 64,
                                                "smooth": 2, "format": "csv"})
        got = list(csv.DictReader(io.StringIO(api.text)))
        assert len(got) == len(expected) == 3 * 64
        for mine, theirs in zip(got, expected):
            assert (mine["legend"], mine["n_runs"], mine["n_at_x"]) == (theirs["legend"], theirs["n_runs"], theirs["n_at_x"])
            for key in ("x", "center", "low", "high"):
                assert float(mine[key]) == pytest.approx(float(theirs[key]), rel=1e-12, abs=1e-12), key


def test_curves_json_groups_individual_runs_and_bound(client, demo):
    data = client.get("/api/curves", params={"where": "seed < 3", "task": "dqn/CartPole", "metric": ["return", "loss"],
                                             "group": "lr", "individual": "1", "x_max": 20000}).json()
    groups = data["metrics"]["return"]
    assert [g["legend"] for g in groups] == ["lr=0.0001", "lr=0.0003", "lr=0.001"]
    assert all(g["n"] == 3 and len(g["individual"]) == 3 and max(g["x"]) <= 20000 for g in groups)
    assert np.all(np.array(groups[0]["low"]) <= np.array(groups[0]["high"]))
    assert set(data["metrics"]) == {"return", "loss"}
    bad = client.get("/api/curves", params={"metric": "return", "agg": "max"})
    assert bad.status_code == 400
    missing = client.get("/api/curves", params={"metric": "retrun"})
    assert missing.status_code == 400 and "retrun" in missing.json()["error"]["message"]
