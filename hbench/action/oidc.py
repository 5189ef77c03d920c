"""The workflow's GitHub OIDC token, requested for the service as its audience.

A job with `permissions: id-token: write` finds `ACTIONS_ID_TOKEN_REQUEST_URL` and
`ACTIONS_ID_TOKEN_REQUEST_TOKEN` in its environment; a GET of that URL with
`&audience=…` and the request token as a bearer answers `{"value": "<jwt>"}`. Without
the permission (or in a pull request from a fork) neither variable is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

import httpx

from hbench import __version__
from hbench.action.protocol import PERMISSION_YAML, StepError
from hbench.action.workflow_source import fork_pull_request, request_refused
from hbench.errors import HbenchError

URL_VARIABLE = "ACTIONS_ID_TOKEN_REQUEST_URL"
TOKEN_VARIABLE = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"  # noqa: S105 - a variable's name
TIMEOUT = httpx.Timeout(30.0)


def audience_for(service_url: str) -> str:
    """The audience the service checks: its public URL, without a trailing slash."""
    return service_url.rstrip("/")


def request_url(base: str, audience: str) -> str:
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}audience={quote(audience, safe='')}"


def id_token_available(environ: Mapping[str, str]) -> bool:
    """Whether this job may request an OIDC token (it has `id-token: write`)."""
    return bool(environ.get(URL_VARIABLE, "").strip() and environ.get(TOKEN_VARIABLE, "").strip())


def request_id_token(
    environ: Mapping[str, str],
    service_url: str,
    *,
    transport: httpx.BaseTransport | None = None,
    timeout: httpx.Timeout = TIMEOUT,
) -> str:
    """Ask the runner for an ID token whose audience is the service; return the JWT."""
    base = environ.get(URL_VARIABLE, "").strip()
    bearer = environ.get(TOKEN_VARIABLE, "").strip()
    if not base or not bearer:
        raise unavailable(environ)
    url = request_url(base, audience_for(service_url))
    headers = {"authorization": f"bearer {bearer}", "user-agent": f"hbench/{__version__}"}
    try:
        with httpx.Client(timeout=timeout, transport=transport) as client:
            answer = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        message = f"could not request the OIDC token: {exc.__class__.__name__}: {exc}"
        raise HbenchError("action-oidc-failed", message) from None
    try:
        value = answer.json().get("value") if answer.is_success else None
    except (ValueError, AttributeError):
        value = None
    if not answer.is_success:
        raise HbenchError("action-oidc-failed", request_refused(answer.status_code))
    if not isinstance(value, str) or not value:
        message = f"the runner answered the OIDC token request with HTTP {answer.status_code}"
        raise HbenchError("action-oidc-failed", message + " and no token")
    return value


def unavailable(environ: Mapping[str, str]) -> StepError:
    """`action-oidc-unavailable`, with the cause the job can tell and its own fix: the
    permission is asked for only where nothing else explains the missing token."""
    env = dict(environ)
    missing = (
        f"{URL_VARIABLE} and {TOKEN_VARIABLE} are not set, so this job can't request a "
        "GitHub OIDC token"
    )
    if env.get("ACT") == "true":
        cause, fix = "this job runs under act, which gives jobs no OIDC token", FIX_WITHOUT_OIDC
    elif "true" in (env.get("GITEA_ACTIONS"), env.get("FORGEJO_ACTIONS")):
        cause, fix = (
            "this job runs on a Gitea or Forgejo runner, which has no GitHub OIDC",
            (FIX_WITHOUT_OIDC),
        )
    elif fork_pull_request(env):
        cause = "this job runs for a pull request from a fork, which GitHub never gives one"
        fix = "run it from a branch of the repository itself, or " + FIX_WITHOUT_OIDC
    else:
        cause = "the job lacks `permissions: id-token: write`"
        fix = f"give the job these permissions:\n{PERMISSION_YAML}\nor pass the `api-token` input"
    return StepError("action-oidc-unavailable", f"{missing}: {cause}", fix=fix)


FIX_WITHOUT_OIDC = "pass the `api-token` input, an hbench API token from a secret"
