"""Request handlers of the dashboard API: read the request, call the parts, answer JSON.

Each handler runs in a worker thread (``fn(ctx, request)``) and may raise an
:class:`RLA.errors.RLAError`, which the app turns into a JSON error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional, Tuple

from RLA.errors import QueryError, RLAError
from RLA.ui.actions import ActionError, ReadOnlyError, annotate, run_action
from RLA.ui.curves import CurveOptions, curves_csv, curves_json, grouped_curves
from RLA.ui.runs import RunFilter, RunsSource, runs_page, select, statuses, task_counts

MAX_COMPARE = 10


@dataclass
class Context:
    """What every handler knows: the data root, whether actions are refused, the warm index."""

    data_root: Path
    read_only: bool
    source: RunsSource


def _json(data: Any, status: int = 200) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})


def _filter(request: Any) -> RunFilter:
    return RunFilter.from_query(request.query_params, request.query_params.getlist)


def _number(request: Any, name: str, default: Any, kind: type = float) -> Any:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        return kind(raw)
    except ValueError:
        raise QueryError(
            f"Bad value for {name}",
            expected=f"a {kind.__name__}",
            found=repr(raw),
            fix=f"pass {name}={default}",
        ) from None


def index_page(request: Any) -> Any:
    from starlette.responses import HTMLResponse

    from RLA.ui.security import TOKEN_COOKIE

    html = (Path(__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    response = HTMLResponse(
        html,
        headers={
            "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; media-src 'self'; "
            "style-src 'self'; script-src 'self'; object-src 'none'; "
            "frame-ancestors 'none'; base-uri 'none'",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )
    token = request.query_params.get("token")
    if token:  # the guard checked it; later requests of the page carry it as a cookie
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
    return response


def info(ctx: Context, request: Any) -> Any:
    from RLA.version import __version__

    return _json({"data_root": str(ctx.data_root), "read_only": ctx.read_only, "version": __version__})


def tasks(ctx: Context, request: Any) -> Any:
    archived = {"1": True, "all": None}.get(request.query_params.get("archived", "0"), False)
    return _json({"tasks": task_counts(ctx.source, archived)})


def runs(ctx: Context, request: Any) -> Any:
    params = request.query_params
    columns: List[str] = [c for c in params.getlist("column") if c]
    page = runs_page(
        ctx.source,
        _filter(request),
        sort=params.get("sort"),
        descending=params.get("desc") in ("1", "true"),
        limit=params.get("limit", 50),
        offset=params.get("offset", 0),
        columns=columns,
    )
    return _json(page)


def status(ctx: Context, request: Any) -> Any:
    return _json({"status": statuses(ctx.data_root, request.query_params.getlist("run"))})


def run(ctx: Context, request: Any) -> Any:
    from RLA.ui.detail import run_detail
    from RLA.ui.lookup import resolve_run

    layout = resolve_run(ctx.data_root, request.path_params["index"])
    return _json(run_detail(layout, _number(request, "lines", 200, int)))


def _curve_options(request: Any) -> CurveOptions:
    params = request.query_params
    x_max = _number(request, "x_max", None)
    x_min = _number(request, "x_min", None)
    bound: Optional[Tuple[float, float]] = None
    if x_max is not None or x_min is not None:
        bound = (float("-inf") if x_min is None else x_min, float("inf") if x_max is None else x_max)
    return CurveOptions(
        metrics=[m for m in params.getlist("metric") if m],
        x=params.get("x") or "time-step",
        group_by=[g for g in params.getlist("group") if g],
        agg=params.get("agg", "mean"),
        band=params.get("band", "stderr"),
        smooth=_number(request, "smooth", 1.0),
        resample=_number(request, "resample", 512, int),
        x_bound=bound,
        vary_len=params.get("vary_len") in ("1", "true"),
        individual=params.get("individual") in ("1", "true"),
    )


def curves(ctx: Context, request: Any) -> Any:
    from starlette.responses import Response

    opts = _curve_options(request)
    with ctx.source.catalog() as catalog:
        rows = select(catalog, _filter(request)).runs
    if request.query_params.get("format") == "csv":
        return Response(
            curves_csv(grouped_curves(rows, opts)),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="rla-curves.csv"'},
        )
    return Response(
        curves_json(rows, opts), media_type="application/json", headers={"Cache-Control": "no-store"}
    )


def compare(ctx: Context, request: Any) -> Any:
    from RLA.run_diff import compare_runs
    from RLA.ui.encode import jsonable
    from RLA.ui.lookup import resolve_run

    indices = [i for i in request.query_params.getlist("run") if i]
    if not 2 <= len(indices) <= MAX_COMPARE:
        raise QueryError(
            "Compare needs runs",
            expected=f"2 to {MAX_COMPARE} runs (run=A&run=B)",
            found=f"{len(indices)}",
            fix="tick two or more runs on the runs page",
        )
    return _json(jsonable(compare_runs([resolve_run(ctx.data_root, i) for i in indices])))


def trash(ctx: Context, request: Any) -> Any:
    """The runs in the trash (what the ``undelete`` action can restore)."""
    from RLA.ops.trash import list_trash
    from RLA.ui.encode import jsonable

    items = list_trash(ctx.data_root)
    runs = [
        {
            "index": item.index,
            "task": item.layout.task,
            "archived": item.layout.archived,
            "stamp": item.stamp,
            "deleted_at": item.deleted_at,
            "data_types": list(item.data_types),
        }
        for item in reversed(items)  # the newest deletion first
    ]
    return _json(jsonable({"runs": runs}))


def file(ctx: Context, request: Any) -> Any:
    from starlette.responses import FileResponse

    from RLA.ui.files import file_headers, resolve_file

    path = resolve_file(ctx.data_root, request.query_params.get("path", ""))
    media, headers = file_headers(path)
    return FileResponse(path, media_type=media, headers=headers)


def _writable(ctx: Context) -> None:
    if ctx.read_only:
        raise ReadOnlyError(
            "The dashboard is read-only",
            expected="rla ui without --read-only, on 127.0.0.1",
            found="--read-only (the default off loopback)",
            fix="use the rla command line",
        )


def action(ctx: Context, request: Any) -> Any:
    _writable(ctx)
    body = request.state.body
    if not isinstance(body, dict):
        raise ActionError(
            "Bad action request",
            expected='{"action": ..., "runs": [...]}',
            found=type(body).__name__,
            fix="send a JSON object",
        )
    action_name: Any = body.get("action")  # checked by run_action
    result = run_action(ctx.data_root, action_name, body.get("runs") or [], body.get("confirm") is True)
    if result["applied"]:
        ctx.source.refresher.invalidate()  # the page reloads its table next: show the move at once
    return _json(result)


def set_annotations(ctx: Context, request: Any) -> Any:
    _writable(ctx)
    body = request.state.body
    if not isinstance(body, dict):
        raise ActionError(
            "Bad annotation request",
            expected='{"add": [...], "remove": [...], "note": "..."}',
            found=type(body).__name__,
            fix="send a JSON object",
        )
    return _json(annotate(ctx.data_root, request.path_params["index"], body).to_json())


__all__ = ["Context", "RLAError"]
