"""The API's one error envelope, and the one place rule codes become HTTP status codes.

Every `/api` refusal has the same shape, whatever raised it (an `HbenchError`, FastAPI's
request validation, routing, or a bug)::

    {"detail": "<message> (rule-code)", "code": "rule-code",
     "help": "/guide/troubleshooting#rule-code",
     "errors": [{"code": "rule-code", "message": "<message>", "path": null}, ...]}

`errors` lists every problem, not only the first; `path` names the field or file a problem
concerns, when there is one; `help` is the first code's entry on the service's
Troubleshooting page. `tests/app/test_error_shape.py` pins the shape. Each code's HTTP
status is the catalogue's (`hbench.codes`).

The runs API under `/v1` keeps the shape of the skill document it implements
(`../shared/spec/benchhub-skill.md`), `{"error": {"code", "message", "details", "type"}}`;
`respond` is the one place that chooses between the two, by the request's path.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import (
    http_exception_handler,
    request_validation_exception_handler,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from hbench.codes import Area, codes, guide_link, status_of
from hbench.errors import HbenchError, Problem

logger = logging.getLogger(__name__)

API_PREFIX = "/api"
V1_PREFIX = "/v1"

# Routing's own refusals, for statuses no code of ours raises.
CODE_BY_HTTP_STATUS: dict[int, str] = {
    401: "auth-required",
    404: "endpoint-not-found",
    405: "method-not-allowed",
}
# RFC 6750: a 401 names the scheme the client should use.
HEADERS_BY_STATUS: dict[int, dict[str, str]] = {401: {"WWW-Authenticate": "Bearer"}}


class ErrorItem(BaseModel):
    """One problem: its rule code, a sentence for people, and the field or file concerned."""

    code: str = Field(examples=["request-invalid"])
    message: str = Field(examples=["body.name: Field required"])
    path: str | None = Field(default=None, examples=["body.name"])


class ErrorEnvelope(BaseModel):
    """Every `/api` error: the first problem's message and code, and every problem."""

    detail: str = Field(
        description="The first problem's message, ending with its rule code in parentheses.",
        examples=["body.name: Field required (request-invalid)"],
    )
    code: str = Field(
        description="The first problem's rule code; docs/rule-codes.md explains each.",
        examples=["request-invalid"],
    )
    help: str = Field(
        description="Where the first problem's code is explained, with how to fix it: its "
        "entry on the service's Troubleshooting page, relative to the service's address.",
        examples=["/guide/troubleshooting#request-invalid"],
    )
    errors: list[ErrorItem]


def status_for(code: str) -> int:
    """The HTTP status an error with this rule code is answered with (the catalogue's)."""
    return status_of(code)


def envelope(problems: Sequence[Problem]) -> ErrorEnvelope:
    """The envelope for one or more problems (the first names the error)."""
    first, more = problems[0], len(problems) - 1
    message = first.message
    if more:
        message += f"; and {more} more {'problem' if more == 1 else 'problems'}"
    return ErrorEnvelope(
        detail=f"{message} ({first.code})",
        code=first.code,
        help=guide_link(first.code),
        errors=[ErrorItem(code=p.code, message=p.message, path=p.path) for p in problems],
    )


def error_response(problems: Sequence[Problem]) -> JSONResponse:
    """The envelope as a response, with the status its first problem's code maps to."""
    status = status_for(problems[0].code)
    return JSONResponse(
        envelope(problems).model_dump(), status_code=status, headers=HEADERS_BY_STATUS.get(status)
    )


def validation_problems(errors: Iterable[Any]) -> list[Problem]:
    """FastAPI's validation errors as problems, each naming where it is (`body.name`)."""
    problems = []
    for error in errors:
        path = ".".join(str(part) for part in error.get("loc", ())) or None
        message = error.get("msg", "invalid value")
        problems.append(Problem("request-invalid", f"{path}: {message}" if path else message, path))
    return problems or [Problem("request-invalid", "the request is invalid")]


def is_api(request: Request) -> bool:
    path = request.url.path
    return path == API_PREFIX or path.startswith(API_PREFIX + "/")


def is_v1(request: Request) -> bool:
    path = request.url.path
    return path == V1_PREFIX or path.startswith(V1_PREFIX + "/")


# The skill document's error `type`s: its own two, then the usual ones by status.
V1_TYPE_BY_CODE = {"validation_error": "validation_error", "rate_limited": "rate_limit_error"}
V1_TYPE_BY_STATUS = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}


def v1_body(
    problems: Sequence[Problem], details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The `/v1` shape: the first problem's code and message, and every problem as a detail."""
    first, status = problems[0], status_for(problems[0].code)
    kind = V1_TYPE_BY_CODE.get(first.code) or V1_TYPE_BY_STATUS.get(status)
    if details is None and (len(problems) > 1 or first.path is not None):
        details = [{"path": v1_path(p.path), "message": p.message} for p in problems]
    return {
        "error": {
            "code": first.code,
            "message": first.message,
            "details": details,
            "type": kind or ("api_error" if status >= 500 else "invalid_request_error"),
        }
    }


def v1_path(path: str | None) -> list[str | int]:
    """A problem's path as a list of keys, as the skill's `details` give it."""
    return [int(part) if part.isdigit() else part for part in (path or "").split(".") if part]


def v1_validation_details(errors: Iterable[Any]) -> list[dict[str, Any]]:
    """FastAPI's validation errors as `/v1` details: the field's path within the body
    (`["taskRewards", 0, "reward"]`), pydantic's code for the failure, and its message."""
    details = []
    for error in errors:
        location = list(error.get("loc", ()))
        path = location[1:] if location[:1] in (["body"], ["query"], ["path"]) else location
        details.append(
            {"path": path, "code": error.get("type"), "message": error.get("msg", "invalid value")}
        )
    return details


def respond(
    request: Request, problems: Sequence[Problem], details: list[dict[str, Any]] | None = None
) -> JSONResponse:
    """A refusal in the shape the request's path calls for: `/v1`'s, or the envelope."""
    if not is_v1(request):
        return error_response(problems)
    status = status_for(problems[0].code)
    return JSONResponse(
        v1_body(problems, details), status_code=status, headers=HEADERS_BY_STATUS.get(status)
    )


async def handle_hbench_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HbenchError)  # noqa: S101  # registered for this type only
    return respond(request, error.problems)


async def handle_validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)  # noqa: S101  # registered for this type
    if is_v1(request):
        invalid = Problem("validation_error", "Invalid input")
        return respond(request, [invalid], v1_validation_details(error.errors()))
    if not is_api(request):
        return await request_validation_exception_handler(request, error)
    return error_response(validation_problems(error.errors()))


async def handle_http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)  # noqa: S101  # registered for this type
    if not is_api(request) and not is_v1(request):
        return await http_exception_handler(request, error)
    code = CODE_BY_HTTP_STATUS.get(error.status_code, "request-invalid")
    where = f"{request.method} {request.url.path}"
    headers = {name.lower(): value for name, value in (error.headers or {}).items()}
    messages = {
        "endpoint-not-found": f"no API endpoint at {request.url.path}; /docs lists them",
        "method-not-allowed": (
            f"{where} is not allowed; this endpoint takes {headers.get('allow', 'other methods')}"
        ),
        "auth-required": f"{where} needs you to sign in",
    }
    response = respond(request, [Problem(code, messages.get(code, str(error.detail)))])
    response.status_code = error.status_code
    response.headers.update(headers)
    return response


def is_database_unavailable(error: BaseException) -> bool:
    """A failure to reach or write the database, not a fault in what was asked of it: a
    dropped or refused connection, a locked or read-only SQLite file, or no connection of
    the pool free in time."""
    if isinstance(error, (OperationalError, InterfaceError, PoolTimeoutError)):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


async def handle_database_error(request: Request, error: Exception) -> Response:
    # Nothing of the request was committed: the session rolls back when it closes, and the
    # pool replaces the broken connection. The driver's text stays in the server's log.
    if not is_database_unavailable(error):
        raise error  # a bug, not an outage: the server logs its traceback and answers 500
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    logger.warning(
        "database unavailable during %s %s: %s",
        request.method,
        request.url.path,
        type(cause).__name__,
    )
    problem = Problem(
        "service-unavailable",
        "the service can't reach its database right now (it is down or too busy), so "
        "nothing was changed; try again in a minute",
    )
    if not is_api(request) and not is_v1(request):
        return PlainTextResponse(f"{problem.message} ({problem.code})", status_code=503)
    return respond(request, [problem])


async def handle_unexpected_error(request: Request, _error: Exception) -> Response:
    # The server logs the traceback; the body says only that it failed, so no secret,
    # path or stack frame can leak to the caller.
    if not is_api(request) and not is_v1(request):
        return PlainTextResponse("Internal Server Error", status_code=500)
    return respond(
        request, [Problem("internal-error", "the service failed while handling the request")]
    )


def install_error_handlers(app: FastAPI) -> None:
    """Answer every refusal and failure under `/api` with the envelope, under `/v1` with
    the runs API's shape."""
    app.add_exception_handler(HbenchError, handle_hbench_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_error)
    app.add_exception_handler(DBAPIError, handle_database_error)
    app.add_exception_handler(PoolTimeoutError, handle_database_error)
    app.add_exception_handler(Exception, handle_unexpected_error)


def error_responses(*answers: Area | str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for an endpoint that may refuse with the codes of these areas and
    these single codes (and fail), such as `error_responses(Area.AUTH, "request-invalid")`."""
    by_status: dict[int, list[str]] = defaultdict(list)
    for code in codes(*answers, "internal-error"):
        by_status[status_for(code)].append(code)
    return {
        status: {
            "model": ErrorEnvelope,
            "description": ("Failed: " if status >= 500 else "Refused: ")
            + ", ".join(f"`{code}`" for code in sorted(group)),
        }
        for status, group in sorted(by_status.items())
    }
