"""The sign-in cookie, and the check that keeps other sites from using it.

A session is a short signed token (HS256 under a key derived from
`HBENCH_SESSION_SECRET`) naming the account, kept in an HttpOnly, SameSite=Lax cookie.
It holds no GitHub token: GitHub is asked who the person is once, at sign-in. Sessions
are not stored: signing out removes the cookie, and a copied cookie works until it
expires (`HBENCH_SESSION_LIFETIME`); changing the secret ends every session.

Cross-site requests: a request that changes something (any method but GET, HEAD and
OPTIONS) and is signed in by this cookie must carry an `Origin` header naming this
service (`HBENCH_PUBLIC_URL`, or the address the request was sent to when that is
unset). Browsers send `Origin` with every such request (Fetch standard, "append a request
`Origin` header"), and a page on another site can't forge it; SameSite=Lax already keeps
the cookie off most cross-site requests, and this check covers the rest (sibling
subdomains, older browsers). Requests signed in by an API token need no such check:
browsers never add that header on their own.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import jwt
from fastapi import Request
from sqlalchemy.orm import Session

from app.auth.service import refuse_denied
from app.db.models import Account, utcnow
from app.settings import Settings
from hbench.errors import HbenchError

CALLBACK_PATH = "/auth/github/callback"
"""Where GitHub sends the sign-in back, its one-time code in the query (which the access
log drops, `app.http.access_log`)."""
SESSION_COOKIE = "hbench_session"
STATE_COOKIE = "hbench_oauth_state"
STATE_LIFETIME = timedelta(minutes=10)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}


def signing_key(settings: Settings, purpose: str) -> bytes | None:
    """A key for one purpose, derived from the session secret (None without one): a
    state cookie can't pass for a session, and the key is 256 bits whatever the
    secret's length."""
    if settings.session_secret is None:
        return None
    secret = settings.session_secret.get_secret_value().encode()
    return hmac.new(secret, f"hbench:{purpose}".encode(), hashlib.sha256).digest()


def sign(
    settings: Settings, purpose: str, claims: dict[str, Any], lifetime: timedelta, now: datetime
) -> str:
    """A signed, expiring token carrying `claims`, good for `purpose` only."""
    key = signing_key(settings, purpose)
    if key is None:
        raise HbenchError("github-not-configured", "sign-in needs HBENCH_SESSION_SECRET")
    return jwt.encode(
        {**claims, "iat": int(now.timestamp()), "exp": int((now + lifetime).timestamp())},
        key,
        algorithm="HS256",
    )


def unsign(
    settings: Settings, purpose: str, token: str | None, now: datetime
) -> dict[str, Any] | None:
    """The claims of a token `sign` made for `purpose`, or None (forged, expired, absent)."""
    key = signing_key(settings, purpose)
    if key is None or not token:
        return None
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=["HS256"],
            options={"require": ["iat", "exp"], "verify_iat": False, "verify_exp": False},
        )
    except jwt.PyJWTError:
        return None
    # Expiry against the service's clock, which tests move.
    if not isinstance(claims.get("exp"), int) or claims["exp"] <= now.timestamp():
        return None
    return claims


def session_token(settings: Settings, account: Account, now: datetime) -> str:
    """The session cookie's value for an account signed in with GitHub."""
    return sign(
        settings,
        "session",
        {"sub": str(account.id), "gh": account.github_id},
        settings.session_lifetime,
        now,
    )


def session_account(
    request: Request, session: Session, settings: Settings, now: datetime | None = None
) -> Account | None:
    """The account the request's session cookie names, or None without a valid one.
    Refuses a denied account, and a cross-site request that would change something."""
    claims = unsign(settings, "session", request.cookies.get(SESSION_COOKIE), now or utcnow())
    if claims is None:
        return None
    try:
        account = session.get(Account, uuid.UUID(str(claims.get("sub"))))
    except ValueError:
        return None
    # The GitHub id must still match: an account's link is not reassigned under a cookie.
    if account is None or account.github_id is None or account.github_id != claims.get("gh"):
        return None
    refuse_denied(account)
    if request.method not in SAFE_METHODS:
        check_origin(request, settings)
    return account


def service_origin(request: Request, settings: Settings) -> str:
    """This service's origin: from the public URL, or the address of the request."""
    return origin_of(settings.public_url or str(request.base_url)) or ""


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of a URL, lower-cased, the default port left out."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = "" if port in (None, DEFAULT_PORTS[parts.scheme]) else f":{port}"
    return f"{parts.scheme}://{host.lower()}{shown}"


def check_origin(request: Request, settings: Settings) -> None:
    """Refuse a cookie-signed request that changes something and came from another site."""
    sent = request.headers.get("origin")
    expected = service_origin(request, settings)
    if sent is None or origin_of(sent) != expected:
        shown = "no Origin header" if sent is None else f"Origin {sent}"
        raise HbenchError(
            "csrf-refused",
            f"a form or script sent with your sign-in cookie must come from {expected}; "
            f"this request had {shown}",
        )
