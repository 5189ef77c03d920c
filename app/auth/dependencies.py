"""Who is calling: the auth dependencies every protected endpoint declares.

A request is signed in by an API token (`authorization: Bearer hpg_…`), by the cookie
GitHub sign-in sets (`app/github/oauth.py`), or, in local mode only, as the local user
when it comes from this machine. A GitHub Actions OIDC token is refused here: issuing a
run is the one thing it is taken for (`app/auth/trusted.py`).
"""

from __future__ import annotations

import ipaddress
import uuid
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import urlsplit

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.auth.service import authenticate_api_token, ensure_account, refuse_denied
from app.auth.sessions import session_account as github_session_account
from app.auth.tokens import API_TOKEN_PREFIX
from app.clock import ClockDep
from app.db.models import Account, utcnow
from app.dependencies import SessionDep, SettingsDep
from app.settings import Settings
from hbench.errors import HbenchError

JWT_PARTS = 3

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="API token",
    description="An API token from Account settings: `authorization: Bearer hpg_…`.",
)


@dataclass(frozen=True)
class Caller:
    """The signed-in account, and how it signed in (API token, GitHub sign-in cookie, or
    local session)."""

    account: Account
    via: Literal["token", "session", "local"]
    token_id: uuid.UUID | None = None


def looks_like_jwt(value: str) -> bool:
    """Whether a bearer reads as a JWT (a GitHub Actions OIDC token) rather than an API
    token: three dot-separated parts, none empty, and not `hpg_…`."""
    if value.startswith(API_TOKEN_PREFIX):
        return False
    parts = value.split(".")
    return len(parts) == JWT_PARTS and all(parts)


def is_loopback(host: str | None) -> bool:
    """Whether a host name or address is this machine's loopback."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_local_request(client: str | None, host: str | None, origin: str | None) -> bool:
    """Whether a request comes from this machine and was meant for this machine.

    The peer address alone is not enough: a web page in a local browser can reach the
    loopback too. Its `Host` header then names its own domain (DNS rebinding), or its
    `Origin` header names its site (a cross-site form), so both must be loopback as well.
    """
    if not is_loopback(client) or not is_loopback(host):
        return False
    return origin is None or is_loopback(urlsplit(origin).hostname)


def current_caller(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    clock: ClockDep = utcnow,
) -> Caller:
    """The caller, from its API token, its GitHub sign-in or the local session; refuse
    anyone else."""
    if credentials is not None:
        if looks_like_jwt(credentials.credentials):
            raise HbenchError(
                "oidc-token-not-accepted",
                "a GitHub Actions OIDC token is taken only for a workflow's own runs (issuing "
                "one with POST /api/local-runs, and reading, resuming, claiming or abandoning "
                "a run its repository issued, or binding its upload); everywhere else send an "
                "API token, `authorization: Bearer hpg_…`",
            )
        row = authenticate_api_token(session, credentials.credentials)
        return Caller(row.account, "token", row.id)
    if request.headers.get("authorization"):
        raise HbenchError(
            "token-invalid", "the authorization header must be `Bearer hpg_…`, an API token"
        )
    # Signed in with GitHub: the session cookie (app/auth/sessions.py, which also refuses
    # cross-site requests that would change something).
    signed_in = github_session_account(request, session, settings, clock())
    if signed_in is not None:
        return Caller(signed_in, "session")
    client = request.client.host if request.client else None
    if settings.mode == "local" and is_local_request(
        client, request.url.hostname, request.headers.get("origin")
    ):
        refuse_other_pages(request)
        return Caller(local_account(session, settings), "local")
    raise HbenchError("auth-required", sign_in_hint(settings))


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
API_PREFIXES = ("/api/", "/v1/")


def refuse_other_pages(request: Request) -> None:
    """Refuse a web page's request to the JSON API that would change something as the local
    user: a page of another port or site on this machine is on the loopback too.

    A program on this machine (hbench, curl) sends neither `Origin` nor `Sec-Fetch-Site`
    and is the local user, as it runs as them. A browser sends one or both; the service's
    own pages change things through their forms, which check the origin and the form's token
    themselves (`app.web.csrf`), never through the API with the local session, so a
    browser's API request that changes something is refused whatever its origin. An API
    token (`authorization: Bearer hpg_…`) is never added by a browser by itself, and works
    from anywhere.
    """
    if request.method in SAFE_METHODS or not request.url.path.startswith(API_PREFIXES):
        return
    origin, site = request.headers.get("origin"), request.headers.get("sec-fetch-site")
    if origin is None and site is None:
        return
    sender = f"Origin {origin}" if origin is not None else f"Sec-Fetch-Site {site}"
    raise HbenchError(
        "csrf-refused",
        f"a web page ({sender}) may not change anything through the API as this machine's "
        "local user; use the service's own pages, or send an API token "
        "(authorization: Bearer hpg_…)",
    )


def local_account(session: SessionDep, settings: Settings) -> Account:
    # Local mode serves one person on their own machine: that user runs the instance,
    # so it is its maintainer too.
    account = ensure_account(session, settings.local_login, is_maintainer=True)
    if not account.is_maintainer:  # made earlier by `hbench-app tokens create`
        account.is_maintainer = True
        session.commit()
    refuse_denied(account)
    return account


def sign_in_hint(settings: Settings) -> str:
    if settings.mode == "local":
        return (
            "sign in: send authorization: Bearer hpg_… (the local user is signed in only "
            "for requests from this machine to 127.0.0.1 or localhost)"
        )
    return (
        "sign in with GitHub at /auth/github/login, or send authorization: Bearer hpg_…, "
        "an API token from Account settings"
    )


def current_account(caller: Annotated[Caller, Depends(current_caller)]) -> Account:
    """The signed-in account, however it signed in."""
    return caller.account


def session_account(caller: Annotated[Caller, Depends(current_caller)]) -> Account:
    """The signed-in account, refusing API tokens: for making tokens, which a leaked
    token must not be able to do."""
    if caller.via == "token":
        raise HbenchError(
            "session-required",
            "an API token can't create API tokens; sign in on the site, or run "
            "`hbench-app tokens create --login NAME` on the service's machine",
        )
    return caller.account


CurrentCaller = Annotated[Caller, Depends(current_caller)]
CurrentAccount = Annotated[Account, Depends(current_account)]
SessionAccount = Annotated[Account, Depends(session_account)]
