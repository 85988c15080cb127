"""Fixtures of the dashboard tests: the demo database, an API client, a real server, a browser."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser
import demo_data

pytest.importorskip("starlette", reason="the ui extra (starlette, uvicorn) is not installed")
pytest.importorskip("httpx", reason="starlette's TestClient needs httpx (test extra)")


@pytest.fixture
def demo(tmp_path: Path) -> Dict[str, Any]:
    """The demo sweep in ``tmp_path/data``: ``{"root": Path, <name>: index ...}``."""
    root = tmp_path / "data"
    root.mkdir()
    indices = demo_data.build(root)
    return dict(indices, root=root)


@pytest.fixture
def client(demo: Dict[str, Any]) -> Iterator[Any]:
    """A TestClient of the app on the demo database, as a page on 127.0.0.1 would call it."""
    from starlette.testclient import TestClient

    from RLA.ui.app import create_app

    # the index refresh stays in this process (no child to start per test); the real server of
    # the browser tests and test_warm_table.py run it in its child process
    app = create_app(demo["root"], refresh={"worker": False})
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(root: Path, *extra: str, env: Dict[str, str]) -> Any:
    """``rla ui`` in a child process on a free 127.0.0.1 port; returns (process, url)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rla_scripts.cli", "ui", "--data-root", str(root),
                             "--host", "127.0.0.1", "--port", str(port), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"rla ui exited: {proc.stdout.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}/"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("rla ui did not start within 30 s")


def stop_server(proc: Any) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def server(demo: Dict[str, Any], subprocess_env: Dict[str, str]) -> Iterator[str]:
    """A real ``rla ui`` on the demo database; yields its URL."""
    proc, url = start_server(demo["root"], env=subprocess_env)
    try:
        yield url
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Debian Chromium through Selenium per module (skipped when it is not installed)."""
    reason = browser.missing()
    if reason:
        pytest.skip(f"browser tests need Chromium: {reason}")
    drv = browser.start()
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture
def driver(chromium: Any) -> Iterator[Any]:
    """The module's Chromium, as a fresh one: a blank page, no cookie, no cache of an earlier test.

    Each test's server has a port of its own (pages of two tests never share an origin's storage);
    the blank page makes a reused port load the page anew, and cookies (the token's) are per host.
    """

    def blank() -> None:
        chromium.get("about:blank")
        chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
        chromium.execute_cdp_cmd("Network.clearBrowserCache", {})

    blank()
    yield chromium
    blank()
