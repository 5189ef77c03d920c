"""The forms' cross-site token: a per-session value every page form carries in a hidden field.

The token is an HMAC of what signs the person in (the GitHub sign-in cookie, or the local
user's account on this machine) under a key derived from `HBENCH_SESSION_SECRET`, or a
random per-process key when none is set (local mode). A page on another site can't read
it, so a form it makes the browser send lacks it. It is checked beside `check_origin`,
never instead of it; requests signed in by an API token need neither (browsers never add
that header by themselves).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request

from app.auth.dependencies import Caller
from app.auth.sessions import SESSION_COOKIE, signing_key
from app.settings import Settings
from hbench.errors import HbenchError

FIELD = "csrf_token"
"""The hidden field's name in every page form."""

HEADER = "x-hbench-csrf"
"""The header a page script sends it in, for requests that are not forms."""

_PROCESS_KEY = secrets.token_bytes(32)


def csrf_key(settings: Settings) -> bytes:
    """The key tokens are made with: derived from the session secret, else per process."""
    return signing_key(settings, "csrf") or _PROCESS_KEY


def binding(request: Request, caller: Caller) -> str:
    """What the token is tied to: the sign-in cookie itself, or the local account."""
    if caller.via == "session":
        return "session:" + request.cookies.get(SESSION_COOKIE, "")
    return f"{caller.via}:{caller.account.id}"


def csrf_token(request: Request, caller: Caller, settings: Settings) -> str:
    """The token the forms of this signed-in person carry."""
    key = csrf_key(settings)
    return hmac.new(key, binding(request, caller).encode(), hashlib.sha256).hexdigest()


def check_csrf_token(request: Request, caller: Caller, settings: Settings, sent: str) -> None:
    """Refuse a form whose token is missing or not this person's (compared in constant time)."""
    expected = csrf_token(request, caller, settings)
    if not sent or not hmac.compare_digest(expected.encode(), sent.encode()):
        raise HbenchError(
            "csrf-token-invalid",
            "the form lacks its page's security token or carries another's; reload the page "
            "and send the form again from it",
        )
