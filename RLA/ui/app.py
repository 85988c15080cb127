"""The dashboard's ASGI app: the JSON API under ``/api/`` and the static page.

Endpoints (all GET unless said; errors are ``{"error": {message, problem, expected, found,
fix, position}}`` with status 400/403/404):

``/api/info``, ``/api/tasks``, ``/api/runs`` (filters, ``sort``, ``desc``, ``limit``,
``offset``, ``column``), ``/api/status?run=...``, ``/api/run/<index>``, ``/api/curves``
(filters + ``metric``, ``x``, ``group``, ``agg``, ``band``, ``smooth``, ``resample``,
``x_max``, ``vary_len``, ``individual``, ``format=csv``), ``/api/compare?run=A&run=B``,
``/api/file?path=<relative to the data root>``, ``/api/trash``; POST ``/api/action`` and
``/api/run/<index>/annotations`` (refused with ``--read-only``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from functools import partial
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Dict, Optional

from RLA.errors import QueryError, RLAError, RunNotFoundError, UnsafePathError

STATIC = Path(__file__).resolve().parent / "static"


def error_body(exc: RLAError, raw_where: Optional[str] = None) -> Dict[str, Any]:
    """The JSON of an error; ``position`` is an offset into the ``where`` text as sent."""
    position = getattr(exc, "position", None)
    if position is not None and raw_where is not None:
        position += len(raw_where) - len(raw_where.lstrip())
    return {
        "error": {
            "message": str(exc),
            "problem": exc.problem,
            "expected": exc.expected,
            "found": exc.found,
            "fix": exc.fix,
            "position": position,
            "type": type(exc).__name__,
        }
    }


def _status_of(exc: RLAError) -> int:
    if getattr(exc, "http_status", None):
        return int(exc.http_status)  # type: ignore[attr-defined]
    if isinstance(exc, UnsafePathError):
        return 403
    if isinstance(exc, RunNotFoundError):
        return 404
    return 400


def _existing_root(data_root: os.PathLike) -> Path:
    """``data_root`` resolved; RLAError when it is not a folder."""
    root = Path(data_root).resolve()
    if not root.is_dir():
        raise RLAError(
            f"The data root {data_root} does not exist",
            expected="an existing folder",
            found=str(data_root),
            fix="pass --data-root",
        )
    return root


def create_app(
    data_root: os.PathLike,
    read_only: bool = False,
    host: str = "127.0.0.1",
    token: Optional[str] = None,
    refresh: Optional[Dict[str, Any]] = None,
) -> Any:
    """Build the dashboard app for ``data_root`` (wrapped in :class:`RLA.ui.security.Guard`).

    Args:
        data_root: the database root.
        read_only: refuse every action (archive, delete, restore, tags, notes).
        host: the address the server listens on (decides the loopback rules).
        token: required on every request off loopback.
        refresh: options of the background index refresh (``period_s``, ``stale_s``, ``worker``,
            ``idle_s``; see :mod:`RLA.ui.fresh`).
    """
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from RLA.ui import handlers
    from RLA.ui.runs import RunsSource
    from RLA.ui.security import Guard

    root = _existing_root(data_root)
    ctx = handlers.Context(root, read_only, RunsSource(root, **(refresh or {})))

    def route(path: str, fn: Callable, methods: tuple = ("GET",)) -> Route:
        return Route(path, partial(_guarded, fn, ctx), methods=list(methods))

    routes = [
        Route("/", handlers.index_page),
        route("/api/info", handlers.info),
        route("/api/tasks", handlers.tasks),
        route("/api/runs", handlers.runs),
        route("/api/status", handlers.status),
        route("/api/curves", handlers.curves),
        route("/api/compare", handlers.compare),
        route("/api/file", handlers.file),
        route("/api/trash", handlers.trash),
        route("/api/action", handlers.action, ("POST",)),
        route("/api/run/{index:path}/annotations", handlers.set_annotations, ("POST",)),
        route("/api/run/{index:path}", handlers.run),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        _start_preload()
        yield
        ctx.source.close()  # stop the background refresh

    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, host, token)


def _start_preload() -> None:
    """Import the chart modules in a thread while the first pages are shown, not in the
    first chart request (see :func:`RLA.ui.curves.preload`)."""
    import threading

    from RLA.ui.curves import preload

    threading.Thread(target=preload, name="rla-ui-preload", daemon=True).start()


async def _guarded(fn: Callable, ctx: Any, request: Any) -> Any:
    """Run a handler in a worker thread (file and CPU work), turning RLA errors into JSON."""
    from starlette.responses import JSONResponse

    if request.method == "POST":
        try:
            request.state.body = json.loads((await request.body()) or b"{}")
        except ValueError as exc:
            return JSONResponse(
                {"error": {"message": f"the request body is not JSON ({exc})"}}, status_code=400
            )
    try:
        return await asyncio.to_thread(fn, ctx, request)
    except RLAError as exc:
        where = request.query_params.get("where") if isinstance(exc, QueryError) else None
        return JSONResponse(error_body(exc, where), status_code=_status_of(exc))
