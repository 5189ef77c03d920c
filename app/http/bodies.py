"""Request bodies: the largest each endpoint takes, how deep its JSON may nest, and how
slowly it may arrive.

`BodyGuard` is a pure ASGI middleware that wraps `receive`, so every body the service
reads (FastAPI's JSON and forms, the uploads' and webhooks' own streams) passes through
it chunk by chunk, and nothing is buffered here:

- a `Content-Length` over the endpoint's maximum is answered 413 before the endpoint runs
  or a byte of the body is read; a body sent without one is counted as it arrives and
  refused at the chunk that passes the maximum (`request-body-too-large`; uploads and
  webhooks keep their own codes);
- a JSON body that nests deeper than `MAX_JSON_DEPTH` is refused at the bracket that
  passes it (`request-json-too-deep`);
- after a grace period a body must keep arriving at a minimum average rate, and all of it
  within a deadline scaled to the endpoint's maximum, or it is answered 408
  (`request-body-too-slow`). Only the time spent waiting for the client counts, never the
  time the service spends on what it has read.

A refusal raises inside the endpoint's read, so the endpoint unwinds as on any error (an
upload's scratch folder is removed before the answer goes out); whatever the endpoint then
answers is dropped for the refusal. Every endpoint that takes a body is named in `LIMITS`,
held to the app's routes by `tests/app/http/test_bodies.py`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from starlette.requests import Request
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import respond
from app.settings import Settings
from app.v1.schemas import RunSubmission
from hbench.errors import HbenchError, Problem
from hbench.limits import MIB

from .json_size import largest_json
from .served import served_settings

KIB = 1024
MAX_JSON_DEPTH = 32
"""Arrays and objects inside one another. The deepest valid body (agent options in an
issue request) needs a handful; Python's parser would give up near a thousand."""

SMALL = 16 * KIB
"""A token's name, a confirmation, a take-down's note, a form's fields: well under this."""
REPORT = 64 * KIB
"""A report's 2,000 characters at twelve bytes each (escaped or form-encoded), and more."""
ISSUE = MIB
"""An issue request's longest prompt template, passages and agent options, escaped."""
RUN_SUBMISSION = largest_json(RunSubmission)
"""The largest `RunSubmission` as JSON, from the schema's own limits (11.8 MiB)."""
WEBHOOK_MAX_BYTES = 25 * MIB
"""A GitHub webhook delivery: GitHub caps its payloads at 25 MB. The webhook endpoint reads its
own stream (`app.github.webhooks`) and refuses past this too."""
DEFAULT = SMALL
"""Every request to an address `LIMITS` does not name (a GET, an unknown path)."""


@dataclass(frozen=True)
class BodyLimit:
    """The most bytes an endpoint's body may take, and whether it is JSON to bound."""

    max_bytes: int
    json: bool = True
    code: str = "request-body-too-large"
    what: str = "the request's body"


def upload_limit(settings: Settings) -> BodyLimit:
    return BodyLimit(
        settings.upload_max_bytes, json=False, code="upload-too-large", what="the upload"
    )


WEBHOOK = BodyLimit(WEBHOOK_MAX_BYTES, json=False, code="webhook-too-large", what="the delivery")

Rule = BodyLimit | Callable[[Settings], BodyLimit]

LIMITS: Final[Mapping[tuple[str, str], Rule]] = {
    # The JSON API.
    ("POST", "/api/tokens"): BodyLimit(SMALL),
    ("DELETE", "/api/tokens/{token_id}"): BodyLimit(SMALL),
    ("POST", "/api/local-runs"): BodyLimit(ISSUE),
    ("POST", "/api/local-runs/{run_id}/abandon"): BodyLimit(SMALL),
    ("POST", "/api/local-runs/{run_id}/resume"): BodyLimit(SMALL),
    ("POST", "/api/local-runs/{run_id}/claim"): BodyLimit(SMALL),
    ("POST", "/api/bench/uploads"): upload_limit,
    ("POST", "/api/bench/upload-sessions"): BodyLimit(SMALL),
    ("PUT", "/api/bench/upload-sessions/{session_id}/parts/{number}"): upload_limit,
    ("POST", "/api/bench/upload-sessions/{session_id}/complete"): BodyLimit(SMALL),
    ("DELETE", "/api/bench/upload-sessions/{session_id}"): BodyLimit(SMALL),
    ("POST", "/api/bench/jobs/{job_id}/publish"): BodyLimit(SMALL),
    ("POST", "/api/bench/jobs/{job_id}/withdraw"): BodyLimit(SMALL),
    ("DELETE", "/api/bench/jobs/{job_id}"): BodyLimit(SMALL),
    ("POST", "/api/reports"): BodyLimit(REPORT),
    ("POST", "/api/admin/reports/{number}/dismiss"): BodyLimit(SMALL),
    ("POST", "/api/admin/reports/{number}/take-down"): BodyLimit(SMALL),
    ("POST", "/api/admin/runs/{run_id}/take-down"): BodyLimit(SMALL),
    ("POST", "/api/admin/deny"): BodyLimit(SMALL),
    ("DELETE", "/api/admin/deny/{login}"): BodyLimit(SMALL),
    ("POST", "/v1/runs"): BodyLimit(RUN_SUBMISSION),
    ("POST", "/api/github/webhooks"): WEBHOOK,
    ("POST", "/auth/logout"): BodyLimit(SMALL),
    # The web pages' forms, and the page script's upload.
    ("POST", "/run"): BodyLimit(ISSUE, json=False),
    ("POST", "/bench/upload"): upload_limit,
    ("POST", "/bench/jobs/{job_id}/publish"): BodyLimit(SMALL, json=False),
    ("POST", "/bench/jobs/{job_id}/withdraw"): BodyLimit(SMALL, json=False),
    ("POST", "/bench/jobs/{job_id}/delete"): BodyLimit(SMALL, json=False),
    ("POST", "/bench/runs/{run_id}/abandon"): BodyLimit(SMALL, json=False),
    ("POST", "/settings/tokens"): BodyLimit(SMALL, json=False),
    ("POST", "/settings/tokens/{token_id}/revoke"): BodyLimit(SMALL, json=False),
    ("POST", "/report"): BodyLimit(REPORT, json=False),
    ("POST", "/maintainers/reports/{number}/dismiss"): BodyLimit(SMALL, json=False),
    ("POST", "/maintainers/reports/{number}/take-down"): BodyLimit(SMALL, json=False),
    ("POST", "/maintainers/deny"): BodyLimit(SMALL, json=False),
    ("POST", "/maintainers/allow"): BodyLimit(SMALL, json=False),
}

_COMPILED = [(method, compile_path(path)[0], rule) for (method, path), rule in LIMITS.items()]


def limit_for(method: str, path: str, settings: Settings) -> BodyLimit:
    """The limit on a request's body, by its method and path."""
    for known, pattern, rule in _COMPILED:
        if known == method and pattern.match(path):
            return rule(settings) if callable(rule) else rule
    return BodyLimit(DEFAULT)


@dataclass(frozen=True)
class Pace:
    """How slowly a body may arrive: after `grace` seconds at least `min_rate` bytes a
    second on average, and all of it within `deadline` seconds (of waiting)."""

    grace: float
    min_rate: int
    deadline: float

    @classmethod
    def of(cls, settings: Settings, max_bytes: int) -> Pace:
        grace = settings.body_grace_period.total_seconds()
        return cls(grace, settings.body_min_rate, grace + max_bytes / settings.body_deadline_rate)


def size(count: int) -> str:
    if count >= MIB:
        return f"{count / MIB:.1f} MiB"
    return f"{count / KIB:.1f} KiB" if count >= KIB else f"{count:,} bytes"


def seconds(count: float) -> str:
    shown = f"{count:.0f}" if count >= 10 else f"{count:.1f}".removesuffix(".0")
    return f"{shown} second" if shown == "1" else f"{shown} seconds"


def too_large(limit: BodyLimit, declared: int | None) -> Problem:
    sent = f"is {size(declared)}" if declared is not None else "goes on"
    fix = (
        "send a job this large in parts (`hbench jobs upload` does, POST "
        "/api/bench/upload-sessions), each part within this cap"
        if limit.code == "upload-too-large"
        else "send less, or split it over several requests"
    )
    return Problem(
        limit.code, f"{limit.what} {sent}, over this endpoint's {size(limit.max_bytes)}; {fix}"
    )


def too_deep() -> Problem:
    return Problem(
        "request-json-too-deep",
        f"the request's JSON nests arrays and objects more than {MAX_JSON_DEPTH} deep; no "
        "valid body needs that many: send the fields the API page (/docs) describes",
    )


def too_slow(pace: Pace, received: int, *, stalled: bool) -> Problem:
    why = (
        f"it arrived slower than {size(pace.min_rate)} a second after its first "
        f"{seconds(pace.grace)} ({size(received)} so far)"
        if stalled
        else f"all of it did not arrive within {seconds(pace.deadline)}"
    )
    return Problem(
        "request-body-too-slow",
        f"the request's body was cut off: {why}; send it again over a steadier connection",
    )


class BodyRefusedError(HbenchError):
    """Raised by `receive` inside the endpoint once its body is refused."""


_JSON_BRACKETS = re.compile(rb'["\[\]{}]')
_STRING_STOPS = re.compile(rb'["\\]')


class JsonDepth:
    """The nesting of a JSON text read chunk by chunk: brackets outside strings."""

    def __init__(self) -> None:
        self.depth = 0
        self.deepest = 0
        self._in_string = False
        self._escaped = False  # a chunk ended just after a backslash inside a string

    def feed(self, chunk: bytes) -> int:
        """Read a chunk; return the deepest nesting seen so far."""
        at, end = 0, len(chunk)
        if self._escaped and end:
            at, self._escaped = 1, False
        while at < end:
            if self._in_string:
                stop = _STRING_STOPS.search(chunk, at)
                if stop is None:
                    break
                if stop.group() == b"\\":
                    self._escaped = stop.end() == end
                    at = stop.end() + 1
                    continue
                self._in_string, at = False, stop.end()
                continue
            bracket = _JSON_BRACKETS.search(chunk, at)
            if bracket is None:
                break
            at, mark = bracket.end(), bracket.group()
            if mark == b'"':
                self._in_string = True
            elif mark in (b"[", b"{"):
                self.depth += 1
                self.deepest = max(self.deepest, self.depth)
            else:
                self.depth -= 1
        return self.deepest


def is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            kind: str = value.decode("latin-1").split(";", 1)[0].strip().lower()
            return kind == "application/json" or kind.endswith("+json")
    return False


def declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


class BodyReader:
    """One request's body, counted, scanned and timed as the endpoint reads it."""

    def __init__(
        self, limit: BodyLimit, pace: Pace, *, json: bool, clock: Callable[[], float]
    ) -> None:
        self.limit, self.pace, self.clock = limit, pace, clock
        self.received = 0
        self.waited = 0.0
        self.done = False
        self.refused: Problem | None = None
        self.depth = JsonDepth() if json else None

    def refuse(self, problem: Problem) -> BodyRefusedError:
        self.refused = problem
        return BodyRefusedError(problem.code, problem.message)

    def allowance(self) -> tuple[float, bool]:
        """How long the next chunk may take, and whether running out means a stall (too
        slow on average) rather than the whole deadline."""
        by_rate = self.pace.grace + self.received / self.pace.min_rate - self.waited
        by_deadline = self.pace.deadline - self.waited
        return max(0.0, min(by_rate, by_deadline)), by_rate < by_deadline

    async def receive(self, receive: Receive) -> Message:
        if self.refused is not None:
            raise BodyRefusedError(self.refused.code, self.refused.message)
        if self.done:
            return await receive()  # after the body: a disconnect, which may wait
        allowed, stall = self.allowance()
        started = self.clock()
        try:
            message = await asyncio.wait_for(receive(), allowed)
        except TimeoutError:
            raise self.refuse(too_slow(self.pace, self.received, stalled=stall)) from None
        finally:
            self.waited += self.clock() - started
        if message["type"] != "http.request":
            self.done = True
            return message
        chunk: bytes = message.get("body", b"")
        self.received += len(chunk)
        if self.received > self.limit.max_bytes:
            raise self.refuse(too_large(self.limit, None))
        if self.depth is not None and self.depth.feed(chunk) > MAX_JSON_DEPTH:
            raise self.refuse(too_deep())
        self.done = not message.get("more_body", False)
        return message


class BodyGuard:
    """The middleware: each HTTP request's body read through a `BodyReader`."""

    def __init__(self, app: ASGIApp, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = served_settings(scope)
        limit = limit_for(scope["method"], scope["path"], settings)
        declared = declared_length(scope)
        if declared is not None and declared > limit.max_bytes:
            await answer(scope, receive, send, too_large(limit, declared))
            return
        reader = BodyReader(
            limit,
            Pace.of(settings, limit.max_bytes),
            json=limit.json and is_json(scope),
            clock=self.clock,
        )
        started = False

        async def guarded_receive() -> Message:
            return await reader.receive(receive)

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if reader.refused is not None and not started:
                return  # the endpoint's own answer to a body it could not read
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        except Exception:
            if reader.refused is None or started:
                raise
        if reader.refused is not None and not started:
            await answer(scope, receive, send, reader.refused)


async def answer(scope: Scope, receive: Receive, send: Send, problem: Problem) -> None:
    """The refusal, in the shape the request's path calls for (`app.errors.respond`)."""
    await respond(Request(scope), [problem])(scope, receive, send)
