"""Who may talk to the dashboard: loopback only by default, a token off loopback, no cross-site writes.

* Bound to a loopback address, every request must name that host in its ``Host`` header
  (a web page cannot reach the dashboard through DNS rebinding).
* Bound to any other address, every request must carry the token: ``Authorization: Bearer
  <token>``, the ``rla_token`` cookie (set when a page is opened as ``/?token=<token>``) or
  ``?token=``. Compared in constant time.
* A request that changes something (POST) must be JSON and, when the browser says where it
  comes from (``Origin``), come from the dashboard itself: another site's form cannot post.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from http.cookies import SimpleCookie
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Optional
from urllib.parse import parse_qs, urlsplit

TOKEN_COOKIE = "rla_token"
Scope = Dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh random token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def _headers(scope: Scope) -> Dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _host_name(host_header: str) -> str:
    """The host part of a ``Host``/``Origin`` value (no port; IPv6 brackets kept)."""
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def loopback_names(bound: str) -> List[str]:
    """Host names a browser may use to reach a server bound to the loopback ``bound``."""
    names = {bound, "localhost", "127.0.0.1", "[::1]", "::1"}
    return sorted(names)


class Guard:
    """ASGI middleware applying the rules of this module before the app sees a request.

    Args:
        app: the wrapped ASGI app.
        host: the address the server is bound to.
        token: required on every request when ``host`` is not loopback (must be set then).
    """

    def __init__(self, app: ASGIApp, host: str, token: Optional[str]) -> None:
        if not is_loopback(host) and not token:
            raise ValueError("a token is required off loopback")
        self.app = app
        self.loopback = is_loopback(host)
        self.hosts = set(loopback_names(host)) if self.loopback else set()
        self.token = token

    def _token_ok(self, scope: Scope, headers: Dict[str, str]) -> bool:
        if not self.token:
            return True
        offered: Iterable[str] = []
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            offered = [auth[7:].strip()]
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is just no cookie
            cookie = SimpleCookie()
        if TOKEN_COOKIE in cookie:
            offered = list(offered) + [cookie[TOKEN_COOKIE].value]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        offered = list(offered) + query.get("token", [])
        return any(hmac.compare_digest(t.encode(), self.token.encode()) for t in offered)

    def problem(self, scope: Scope) -> Optional[tuple]:
        """``(status, message)`` when the request must be refused, else ``None``."""
        headers = _headers(scope)
        host = headers.get("host", "")
        if self.loopback and _host_name(host) not in self.hosts:
            return 421, f"unexpected Host header {host!r}: open the dashboard at the URL rla ui printed"
        if not self._token_ok(scope, headers):
            return 401, "a token is required: open the URL rla ui printed (it ends with ?token=...)"
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            if not headers.get("content-type", "").startswith("application/json"):
                return 415, "changes are JSON requests (Content-Type: application/json)"
            origin = headers.get("origin")
            if origin is not None and urlsplit(origin).netloc != host:
                return 403, f"cross-site request from {origin!r} refused"
        return None

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.problem(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, message = refused
        body = json.dumps({"error": {"message": message}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
