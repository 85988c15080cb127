"""Actions through the API (plan first, apply only confirmed) and the annotations they share with the CLI."""
from __future__ import annotations

from RLA.annotations import read_annotations
from RLA.ui.lookup import resolve_run


def test_action_without_confirm_only_plans(client, demo):
    plan = client.post("/api/action", json={"action": "archive", "runs": [demo["first"]]}).json()
    assert plan["applied"] is False and "archive" in plan["plan"] and demo["first"] in plan["plan"]
    assert resolve_run(demo["root"], demo["first"]).archived is False


def test_archive_then_restore_moves_every_data_type(client, demo):
    done = client.post("/api/action", json={"action": "archive", "runs": [demo["first"]], "confirm": True}).json()
    assert done["applied"] and done["runs"][0]["result"] == "done"
    layout = resolve_run(demo["root"], demo["first"])
    assert layout.archived and layout.checkpoint_dir.is_dir() and layout.results_dir.is_dir()
    assert demo["first"] not in [r["index"] for r in client.get("/api/runs").json()["rows"]]
    archived = client.get("/api/runs", params={"archived": "1"}).json()
    assert [r["index"] for r in archived["rows"]] == [demo["first"]]
    back = client.post("/api/action", json={"action": "restore", "runs": [demo["first"]], "confirm": True}).json()
    assert back["runs"][0]["result"] == "done"
    assert resolve_run(demo["root"], demo["first"]).archived is False


def test_delete_goes_to_the_trash(client, demo):
    log_dir = resolve_run(demo["root"], demo["first"]).log_dir
    client.post("/api/action", json={"action": "delete", "runs": [demo["first"]], "confirm": True})
    assert not log_dir.exists()
    assert list((demo["root"] / ".trash").rglob("run.json"))
    assert client.get(f"/api/run/{demo['first']}").status_code == 404


def test_bad_action_requests_change_nothing(client, demo):
    assert client.post("/api/action", json={"action": "purge", "runs": [demo["first"]], "confirm": True}).status_code == 400
    assert client.post("/api/action", json={"action": "delete", "runs": [], "confirm": True}).status_code == 400
    missing = client.post("/api/action", json={"action": "delete", "confirm": True,
                                               "runs": [demo["first"], "dqn/CartPole/2026/01/01/00-00-00-000000"]})
    assert missing.status_code == 404
    assert resolve_run(demo["root"], demo["first"]).log_dir.is_dir()
    assert client.post("/api/action", content=b"not json", headers={"Content-Type": "application/json"}).status_code == 400


def test_tags_and_note_round_trip_through_the_api(client, demo):
    url = f"/api/run/{demo['first']}/annotations"
    assert client.post(url, json={"add": ["baseline", "paper"], "note": "lr too high"}).json() == \
        {"tags": ["baseline", "paper"], "note": "lr too high"}
    assert client.post(url, json={"remove": ["baseline"]}).json()["tags"] == ["paper"]
    assert read_annotations(resolve_run(demo["root"], demo["first"])).tags == ("paper",)
    bad = client.post(url, json={"add": ["has space"]})
    assert bad.status_code == 400 and "tag" in bad.json()["error"]["message"].lower()
    row = client.get("/api/runs", params={"tag": "paper"}).json()["rows"]
    assert [(r["index"], r["note"]) for r in row] == [(demo["first"], "lr too high")]


def test_trash_lists_deleted_runs_and_undelete_puts_them_back(client, demo):
    assert client.get("/api/trash").json() == {"runs": []}
    client.post("/api/action", json={"action": "delete", "runs": [demo["first"]], "confirm": True})
    trashed = client.get("/api/trash").json()["runs"]
    assert [r["index"] for r in trashed] == [demo["first"]] and trashed[0]["archived"] is False
    assert "log" in trashed[0]["data_types"] and trashed[0]["deleted_at"]
    plan = client.post("/api/action", json={"action": "undelete", "runs": [demo["first"]]}).json()
    assert plan["applied"] is False and demo["first"] in plan["plan"]
    assert client.get("/api/trash").json()["runs"]  # a plan changes nothing
    done = client.post("/api/action", json={"action": "undelete", "runs": [demo["first"]], "confirm": True}).json()
    assert done["runs"][0]["result"] == "done"
    assert resolve_run(demo["root"], demo["first"]).log_dir.is_dir()
    assert client.get("/api/trash").json() == {"runs": []}
    assert demo["first"] in [r["index"] for r in client.get("/api/runs", params={"limit": 100}).json()["rows"]]
