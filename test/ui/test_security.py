"""Who may talk to the dashboard: the token off loopback, the Host check, no cross-site writes, read-only."""
from __future__ import annotations

import pytest

from RLA.ui.server import plan_server


def _client(root, **kwargs):
    from starlette.testclient import TestClient

    from RLA.ui.app import create_app

    base = kwargs.pop("base_url", "http://127.0.0.1:8765")
    return TestClient(create_app(root, **kwargs), base_url=base)


def test_off_loopback_every_request_needs_the_token(demo):
    client = _client(demo["root"], host="0.0.0.0", token="s3cret-token", read_only=True,
                     base_url="http://10.1.2.3:8765")
    for path in ("/", "/api/runs", "/static/core.js", f"/api/run/{demo['first']}"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer s3cret-token"}).status_code == 200, path
    page = client.get("/?token=s3cret-token")
    assert page.status_code == 200 and "rla_token" in page.headers["set-cookie"]
    assert "httponly" in page.headers["set-cookie"].lower()
    assert client.get("/api/runs", cookies={"rla_token": "s3cret-token"}).status_code == 200


def test_off_loopback_without_a_token_is_refused_at_build_time(demo):
    with pytest.raises(ValueError):
        _client(demo["root"], host="0.0.0.0", token=None)


def test_plan_server_defaults():
    local = plan_server("127.0.0.1", 8765)
    assert not local.read_only and local.token is None and local.url == "http://127.0.0.1:8765/"
    remote = plan_server("0.0.0.0", 9000)
    assert remote.read_only and remote.token and len(remote.token) >= 32
    assert remote.url.endswith(f"?token={remote.token}")
    assert plan_server("0.0.0.0", 9000).token != remote.token
    assert not plan_server("0.0.0.0", 9000, read_only=False, token="t").read_only


def test_loopback_refuses_a_foreign_host_header(client):
    assert client.get("/api/runs", headers={"Host": "evil.example:8765"}).status_code == 421
    assert client.get("/api/runs", headers={"Host": "localhost:8765"}).status_code == 200


def test_writes_must_be_json_from_the_dashboard_itself(client, demo):
    body = '{"action": "archive", "runs": ["%s"], "confirm": true}' % demo["first"]
    form = client.post("/api/action", content=body, headers={"Content-Type": "text/plain"})
    assert form.status_code == 415
    foreign = client.post("/api/action", content=body, headers={"Content-Type": "application/json",
                                                                "Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert client.get(f"/api/run/{demo['first']}").json()["archived"] is False


def test_read_only_refuses_every_action(demo):
    client = _client(demo["root"], read_only=True)
    assert client.get("/api/info").json()["read_only"] is True
    for path, body in (("/api/action", {"action": "delete", "runs": [demo["first"]], "confirm": True}),
                       (f"/api/run/{demo['first']}/annotations", {"add": ["x"]})):
        response = client.post(path, json=body)
        assert response.status_code == 403 and "read-only" in response.json()["error"]["message"]
    run = client.get(f"/api/run/{demo['first']}").json()
    assert run["archived"] is False and run["tags"] == []


def test_page_forbids_inline_scripts_and_framing(client):
    policy = client.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
