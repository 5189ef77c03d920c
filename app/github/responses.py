"""githubkit's answers read the service's way: a response's JSON into `app.github.models`,
and a failed request into an `HbenchError` naming what was asked for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from githubkit.exception import RequestError, RequestFailed
from githubkit.response import Response

from app.github.models import Comment, GitHubUser
from hbench.errors import HbenchError


def json_of(response: Response[Any, Any]) -> dict[str, Any]:
    """A response's JSON object, as sent: githubkit's typed views would hide no field
    but insist on every one."""
    data: dict[str, Any] = response.raw_response.json()
    return data


def user_from(data: dict[str, Any]) -> GitHubUser:
    return GitHubUser(id=int(data["id"]), login=str(data["login"]), type=str(data.get("type", "")))


def comment_from(data: dict[str, Any]) -> Comment:
    app = data.get("performed_via_github_app")
    return Comment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        author=user_from(data["user"]),
        app_id=int(app["id"]) if isinstance(app, dict) and "id" in app else None,
    )


@contextmanager
def asking(what: str) -> Iterator[None]:
    """Turn githubkit's failures of one request into an error naming what was asked for."""
    try:
        yield
    except RequestFailed as failed:
        raise request_failed(failed, what) from None
    except RequestError as error:
        raise unreachable(error, what) from None


def request_failed(
    failed: RequestFailed, what: str, code: str = "github-request-failed"
) -> HbenchError:
    request = failed.request
    return HbenchError(
        code,
        f"GitHub answered {failed.response.status_code} when asked for {what} "
        f"({request.method} {request.url.path})",
    )


def unreachable(error: RequestError[Any], what: str) -> HbenchError:
    return HbenchError(
        "github-request-failed", f"GitHub could not be reached for {what}: {type(error).__name__}"
    )
