"""Each request's id, and its count and time in the metrics.

`RequestObserver` is a pure ASGI middleware, outermost but for the forwarded-address one:
it takes the caller's `x-request-id` when it is a short token of safe characters (a
proxy's, say), or makes one; sends it back on the answer; and keeps it in a context
variable for the time of the request, so every log line written meanwhile carries it
(`app.observe.logs`). It counts the request by method, route template (never the path
itself, which holds ids without bound) and status, and times it.
"""

from __future__ import annotations

import re
import time
import uuid
from contextvars import ContextVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observe import metrics

REQUEST_ID_HEADER = "x-request-id"
_WELL_FORMED = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")
UNMATCHED = "unmatched"
"""The route label of a request no route matched (a 404, a scanner's probe)."""

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id of the request this code runs for, or None outside a request."""


def incoming_id(scope: Scope) -> str:
    """The caller's request id when it is well formed, else a new one."""
    for name, value in scope.get("headers", ()):
        if name == REQUEST_ID_HEADER.encode() and _WELL_FORMED.match(value):
            return str(value.decode())
    return uuid.uuid4().hex


def route_label(scope: Scope) -> str:
    """The matched route's template (`/api/bench/jobs/{job_id}`), or the mount's path."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path or "/"
    return UNMATCHED


class RequestObserver:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_id(scope)
        token = request_id.set(rid)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), rid.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = route_label(scope)
            method = scope.get("method", "GET")
            metrics.REQUESTS.labels(method, route, str(status)).inc()
            metrics.REQUEST_SECONDS.labels(method, route).observe(time.perf_counter() - started)
            request_id.reset(token)
