"""Run the dashboard: decide read-only and the token from the address, print the URL, serve."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from RLA.errors import BackendNotInstalledError
from RLA.ui.security import is_loopback, new_token

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class ServerPlan:
    """What ``rla ui`` will do: where it listens, whether it is read-only, its token and URL."""

    host: str
    port: int
    read_only: bool
    token: Optional[str]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")


def plan_server(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    read_only: Optional[bool] = None,
    token: Optional[str] = None,
) -> ServerPlan:
    """Off loopback: read-only unless asked otherwise, and a token (generated unless given)."""
    loopback = is_loopback(host)
    if read_only is None:
        read_only = not loopback
    if token is None and not loopback:
        token = new_token()
    return ServerPlan(host, int(port), bool(read_only), token)


def require_starlette() -> None:
    """Raise :class:`BackendNotInstalledError` when the ``ui`` extra is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise BackendNotInstalledError(
            "rla ui needs starlette and uvicorn",
            expected="the ui extra",
            found=f"missing module {exc.name!r}",
            fix="pip install 'RLA[ui]' (or pip install starlette uvicorn)",
        ) from None


def serve(data_root: os.PathLike, plan: ServerPlan, open_browser: bool = False) -> None:
    """Serve until interrupted (Ctrl-C)."""
    require_starlette()
    import uvicorn

    from RLA.ui.app import create_app

    app = create_app(data_root, read_only=plan.read_only, host=plan.host, token=plan.token)
    config = uvicorn.Config(app, host=plan.host, port=plan.port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    mode = " (read-only)" if plan.read_only else ""
    print(f"RLA dashboard for {data_root}{mode}: {plan.url}", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(plan.url)
    server.run()
