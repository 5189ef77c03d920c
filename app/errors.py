"""The API's one error envelope, and the one place rule codes become HTTP status codes.

Every `/api` refusal has the same shape, whatever raised it (an `HbenchError`, FastAPI's
request validation, routing, or a bug)::

    {"detail": "<message> (rule-code)", "code": "rule-code",
     "errors": [{"code": "rule-code", "message": "<message>", "path": null}, ...]}

`errors` lists every problem, not only the first; `path` names the field or file a problem
concerns, when there is one. `tests/app/test_error_shape.py` pins the shape.
"""

from __future__ import annotations

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
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from hbench.errors import HbenchError, Problem
from hbench.rules import RULE_CODES

API_PREFIX = "/api"

# Codes absent here are refusals of what was sent (a job that fails a check, say): 422.
DEFAULT_STATUS = 422
STATUS_BY_CODE: dict[str, int] = {
    "request-invalid": 422,
    "auth-required": 401,
    "token-invalid": 401,
    "token-revoked": 401,
    "session-required": 403,
    "account-denied": 403,
    "endpoint-not-found": 404,
    "token-not-found": 404,
    "method-not-allowed": 405,
    "internal-error": 500,
    "service-unavailable": 503,
    # Issuing runs: a board's limits are rate limits; abandoning needs a waiting run.
    "run-limit-daily": 429,
    "run-limit-waiting": 429,
    "run-not-found": 404,
    "run-not-waiting": 409,
    # Uploads: a body too large or not gzip; a run token that can't upload (any more).
    "upload-too-large": 413,
    "upload-unpacked-too-large": 413,
    "upload-too-many-files": 413,
    "upload-content-type": 415,
    "upload-not-gzip": 415,
    "run-token-invalid": 401,
    "run-token-expired": 401,
    "run-token-used": 409,
    "run-abandoned": 409,
    "bench-job-not-found": 404,
}
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
    errors: list[ErrorItem]


def status_for(code: str) -> int:
    """The HTTP status an error with this rule code is answered with."""
    return STATUS_BY_CODE.get(code, DEFAULT_STATUS)


def envelope(problems: Sequence[Problem]) -> ErrorEnvelope:
    """The envelope for one or more problems (the first names the error)."""
    first, more = problems[0], len(problems) - 1
    message = first.message
    if more:
        message += f"; and {more} more {'problem' if more == 1 else 'problems'}"
    return ErrorEnvelope(
        detail=f"{message} ({first.code})",
        code=first.code,
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


async def handle_hbench_error(_request: Request, error: Exception) -> Response:
    assert isinstance(error, HbenchError)  # noqa: S101  # registered for this type only
    return error_response(error.problems)


async def handle_validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)  # noqa: S101  # registered for this type
    if not is_api(request):
        return await request_validation_exception_handler(request, error)
    return error_response(validation_problems(error.errors()))


async def handle_http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)  # noqa: S101  # registered for this type
    if not is_api(request):
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
    response = error_response([Problem(code, messages.get(code, str(error.detail)))])
    response.status_code = error.status_code
    response.headers.update(headers)
    return response


async def handle_unexpected_error(request: Request, _error: Exception) -> Response:
    # The server logs the traceback; the body says only that it failed, so no secret,
    # path or stack frame can leak to the caller.
    if not is_api(request):
        return PlainTextResponse("Internal Server Error", status_code=500)
    return error_response(
        [Problem("internal-error", "the service failed while handling the request")]
    )


def install_error_handlers(app: FastAPI) -> None:
    """Answer every refusal and failure under `/api` with the envelope."""
    app.add_exception_handler(HbenchError, handle_hbench_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_error)
    app.add_exception_handler(Exception, handle_unexpected_error)


def error_responses(*codes: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for an endpoint that may refuse with these codes (and fail)."""
    unknown = set(codes) - RULE_CODES
    if unknown:
        raise ValueError(f"unknown rule codes: {sorted(unknown)}")
    by_status: dict[int, list[str]] = defaultdict(list)
    for code in (*codes, "internal-error"):
        by_status[status_for(code)].append(code)
    return {
        status: {
            "model": ErrorEnvelope,
            "description": ("Failed: " if status >= 500 else "Refused: ")
            + ", ".join(f"`{code}`" for code in sorted(group)),
        }
        for status, group in sorted(by_status.items())
    }
