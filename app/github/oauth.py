"""Sign in with GitHub: the OAuth web flow, then a session cookie of our own.

`GET /auth/github/login` sends the browser to GitHub's authorize page with a random
`state`, kept in a signed, short-lived cookie; `GET /auth/github/callback` checks that
GitHub sent the same `state` back (so no other site can finish a sign-in in your
browser), exchanges the code through githubkit, asks GitHub who signed in, finds or makes
the account by its GitHub id, and sets the session cookie. `POST /auth/logout` removes it.
Cookies are HttpOnly and SameSite=Lax, and Secure unless the service is on loopback.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Query, Request, status
from fastapi.responses import RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.auth.dependencies import is_loopback
from app.auth.service import find_account, refuse_denied
from app.auth.sessions import (
    CALLBACK_PATH,
    SESSION_COOKIE,
    STATE_COOKIE,
    STATE_LIFETIME,
    check_origin,
    session_token,
    sign,
    unsign,
)
from app.clock import ClockDep
from app.db.models import Account
from app.db.session import Database
from app.dependencies import DatabaseDep, SettingsDep
from app.github.models import GitHubUser
from app.github.port import GitHubDep
from app.settings import Settings
from hbench.errors import HbenchError

STATE_PATH = "/auth/github"
MAX_NEXT_LENGTH = 2000

# Browser pages, not API endpoints: they answer with redirects, and stay off the API page.
router = APIRouter(tags=["sign-in"], include_in_schema=False)


def require_sign_in(settings: Settings) -> None:
    """GitHub sign-in is for GitHub mode, with the App's OAuth client and a session secret."""
    missing = [
        name
        for name, value in (
            ("HBENCH_GITHUB_CLIENT_ID", settings.github_client_id),
            ("HBENCH_GITHUB_CLIENT_SECRET", settings.github_client_secret),
            ("HBENCH_SESSION_SECRET", settings.session_secret),
        )
        if value is None
    ]
    if settings.mode != "github" or missing:
        reason = "runs in local mode" if settings.mode != "github" else f"lacks {missing}"
        raise HbenchError(
            "github-not-configured",
            f"GitHub sign-in is off: this service {reason}; in local mode the local user "
            "is signed in on this machine",
        )


def web_url(settings: Settings) -> str:
    """GitHub's web address for the configured API (github.com, or the GHES host)."""
    api = urlsplit(settings.github_api_url)
    if api.hostname == "api.github.com":
        return "https://github.com"
    return f"{api.scheme}://{api.netloc}"


def callback_url(request: Request, settings: Settings) -> str:
    base = settings.public_url or str(request.base_url).rstrip("/")
    return base + CALLBACK_PATH


def secure_cookies(request: Request, settings: Settings) -> bool:
    """Cookies are Secure (sent over TLS only) unless the service is on loopback."""
    return not is_loopback(urlsplit(settings.public_url or str(request.base_url)).hostname)


def safe_next(path: str) -> str:
    """Where to go after signing in: a path on this site, never another site."""
    if (
        not path.startswith("/")
        or path.startswith(("//", "/\\"))
        or len(path) > MAX_NEXT_LENGTH
        or any(ord(c) < 0x20 for c in path)
    ):
        return "/"
    return path


@router.get("/auth/github/login", summary="Sign in with GitHub", response_class=RedirectResponse)
def login(
    request: Request,
    settings: SettingsDep,
    clock: ClockDep,
    next_page: Annotated[str, Query(alias="next", description="The page to return to.")] = "/",
) -> RedirectResponse:
    require_sign_in(settings)
    state = secrets.token_urlsafe(32)
    query = urlencode(
        {
            "client_id": settings.github_client_id,
            "redirect_uri": callback_url(request, settings),
            "state": state,
        }
    )
    response = RedirectResponse(
        f"{web_url(settings)}/login/oauth/authorize?{query}", status.HTTP_303_SEE_OTHER
    )
    cookie = sign(
        settings,
        "oauth-state",
        {"state": state, "next": safe_next(next_page)},
        STATE_LIFETIME,
        clock(),
    )
    response.set_cookie(
        STATE_COOKIE,
        cookie,
        max_age=int(STATE_LIFETIME.total_seconds()),
        path=STATE_PATH,
        httponly=True,
        secure=secure_cookies(request, settings),
        samesite="lax",
    )
    return response


@router.get(CALLBACK_PATH, summary="Finish signing in with GitHub", response_class=RedirectResponse)
async def callback(
    request: Request,
    *,
    settings: SettingsDep,
    database: DatabaseDep,
    github: GitHubDep,
    clock: ClockDep,
    code: str | None = None,
    state: str | None = None,
    error: str | None = None,
) -> RedirectResponse:
    require_sign_in(settings)
    started = unsign(settings, "oauth-state", request.cookies.get(STATE_COOKIE), clock())
    if started is None or not state or not hmac.compare_digest(str(started["state"]), state):
        raise HbenchError(
            "oauth-state-mismatch",
            "this sign-in was not started here, or took longer than 10 minutes; sign in again",
        )
    if error is not None or not code:
        raise HbenchError("oauth-denied", "GitHub did not let you sign in; sign in again")
    user = await github.user_from_oauth_code(code, callback_url(request, settings))
    account = await run_in_threadpool(sign_in_account, database, user, settings)
    response = RedirectResponse(safe_next(str(started.get("next", "/"))), status.HTTP_303_SEE_OTHER)
    secure = secure_cookies(request, settings)
    response.delete_cookie(STATE_COOKIE, path=STATE_PATH, secure=secure, httponly=True)
    response.set_cookie(
        SESSION_COOKIE,
        session_token(settings, account, clock()),
        max_age=int(settings.session_lifetime.total_seconds()),
        path="/",
        httponly=True,
        secure=secure,
        samesite="lax",
    )
    return response


@router.post("/auth/logout", summary="Sign out", response_class=RedirectResponse)
def logout(request: Request, settings: SettingsDep) -> RedirectResponse:
    if request.cookies.get(SESSION_COOKIE):
        check_origin(request, settings)
    response = RedirectResponse("/", status.HTTP_303_SEE_OTHER)
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        secure=secure_cookies(request, settings),
        httponly=True,
        samesite="lax",
    )
    return response


def sign_in_account(database: Database, user: GitHubUser, settings: Settings) -> Account:
    """The account of the person GitHub says signed in, made or brought up to date."""
    with database.session() as session:
        account = link_account(session, user)
        # By GitHub's account id: a login can be renamed, then taken by someone else.
        account.is_maintainer = settings.is_maintainer(user.id)
        session.commit()
        refuse_denied(account)
        return account


def link_account(session: Session, user: GitHubUser) -> Account:
    """The account with this GitHub id, its login kept current. A new person gets a new
    account, or the one an operator made for their login (`hbench-app tokens create`)
    if it is linked to nobody yet."""
    account = session.scalars(select(Account).where(Account.github_id == user.id)).one_or_none()
    holder = find_account(session, user.login)
    if holder is not None and holder is not account:
        if account is None and holder.github_id is None:
            holder.github_id = user.id
            return holder
        # The login passed to someone else on GitHub: the old holder renamed there, and
        # gets their new login back when they next sign in.
        holder.login = f"ghost-{holder.github_id or holder.id.hex[:12]}"
        session.flush()
    if account is None:
        account = Account(login=user.login, github_id=user.id)
        session.add(account)
    account.login = user.login
    return account
