"""What every page shares: who is looking, the templates, the security headers, and the
checks a form passes before its handler runs.

Pages are for browsers: they answer in HTML, never with the API's JSON envelope. A
refusal is shown on the page itself, with its message and rule code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, quote

import jinja2
from fastapi import Depends, Request, Security
from fastapi.responses import HTMLResponse
from fastapi.security import HTTPAuthorizationCredentials
from markupsafe import Markup
from sqlalchemy.orm import Session

from app.auth.dependencies import Caller, bearer, current_caller
from app.auth.sessions import check_origin
from app.clock import ClockDep
from app.dependencies import SessionDep, SettingsDep
from app.errors import status_for
from app.reports import policy as reports_policy
from app.settings import Settings
from app.web import csrf
from hbench import __version__
from hbench.codes import guide_link
from hbench.errors import HbenchError, Problem

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
STATIC_PATH = "/web-static"
MAX_FORM_BYTES = 512 * 1024
"""A page form's largest body: the run form's texts (template, instructions, options)."""

environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def rule_code(code: str) -> Markup:
    """A rule code as the pages show it: linked to its entry on the Troubleshooting page."""
    return Markup('<a href="{}"><code class="code">{}</code></a>').format(guide_link(code), code)


environment.globals["rule_code"] = rule_code


SECURITY_HEADERS = {
    "content-security-policy": "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "object-src 'none'",
        ]
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
"""Headers every page carries: scripts and styles from this service only, no framing, and
no copy kept by a cache (pages show tokens once)."""


class PageError(Exception):
    """A refusal to show as a page (raised where a handler can't return one itself)."""

    def __init__(self, error: HbenchError) -> None:
        super().__init__(error.problems[0].message)
        self.error = error


def page_status(code: str) -> int:
    return status_for(code)


@dataclass
class Page:
    """One page request: the person looking (None when nobody is signed in), and the
    means to answer it."""

    request: Request
    settings: Settings
    session: Session
    caller: Caller | None
    now: datetime

    @property
    def signed_in(self) -> Caller:
        """The signed-in caller; a page that needs one refuses everyone else."""
        if self.caller is None:
            raise PageError(HbenchError("auth-required", self.sign_in_message()))
        return self.caller

    def sign_in_message(self) -> str:
        if self.settings.mode == "local":
            return (
                "this page is for the local user, who is signed in on this machine only "
                "(open it at 127.0.0.1 or localhost)"
            )
        return "sign in with GitHub to use this page"

    @property
    def is_maintainer(self) -> bool:
        caller = self.caller
        return caller is not None and (reports_policy.is_maintainer(caller.account, self.settings))

    @property
    def service_url(self) -> str:
        """This service's address, as commands on the pages name it."""
        return (self.settings.public_url or str(self.request.base_url)).rstrip("/")

    async def form(self) -> dict[str, str]:
        """The submitted form, once its sender is signed in, its origin is this service and
        its security token is this person's. Each field's last value."""
        caller = self.signed_in
        # A browser's cookie or the local session, never an API token: those need both
        # cross-site checks (a browser never sends an API token by itself).
        browser = caller.via != "token"
        if browser:
            refuse_as_page(check_origin, self.request, self.settings)
        body = await read_limited(self.request, MAX_FORM_BYTES)
        kind = self.request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise PageError(
                HbenchError("request-invalid", "send the page's form as the browser does")
            )
        try:
            parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
        except (UnicodeDecodeError, ValueError):
            raise PageError(HbenchError("request-invalid", "the form is not readable")) from None
        fields = {name: values[-1] for name, values in parsed.items()}
        if browser:
            token = fields.get(csrf.FIELD, "")
            refuse_as_page(csrf.check_csrf_token, self.request, caller, self.settings, token)
        return fields

    def context(self, **values: Any) -> dict[str, Any]:
        caller = self.caller
        token = csrf.csrf_token(self.request, caller, self.settings) if caller else ""
        shared = layout(self.request, self.settings, caller, self.is_maintainer, token)
        return {**shared, **values}

    def render(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = environment.get_template(template).render(self.context(**values))
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def refused(self, error: HbenchError, template: str, **values: Any) -> HTMLResponse:
        """The page again, with the refusal's problems shown above its form."""
        problems: list[Problem] = list(error.problems)
        return self.render(
            template, status=page_status(problems[0].code), **{**values, "problems": problems}
        )


def refuse_as_page(check: Callable[..., None], *args: Any) -> None:
    """Run a check, its refusal shown as a page."""
    try:
        check(*args)
    except HbenchError as error:
        raise PageError(error) from None


async def read_limited(request: Request, limit: int) -> bytes:
    """The request's body, refused past `limit` bytes without reading the rest."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PageError(HbenchError("request-invalid", f"the form is over {limit // 1024} KiB"))
        chunks.append(chunk)
    return b"".join(chunks)


def get_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> Page:
    """The page request, with its caller if anyone is signed in."""
    try:
        caller: Caller | None = current_caller(request, session, settings, credentials, clock)
    except HbenchError as error:
        if error.code != "auth-required":
            raise PageError(error) from None
        caller = None
    return Page(request, settings, session, caller, clock())


PageDep = Annotated[Page, Depends(get_page)]


def layout(
    request: Request, settings: Settings, caller: Caller | None, maintainer: bool, token: str
) -> dict[str, Any]:
    """What the shared layout shows: who is signed in, the navigation, the form token."""
    return {
        "caller": caller,
        "login": caller.account.login if caller else None,
        "is_maintainer": maintainer,
        "mode": settings.mode,
        "csrf_field": csrf.FIELD,
        "csrf_token": token,
        "path": request.url.path,
        "sign_in_url": "/auth/github/login?next=" + quote(request.url.path, safe="/"),
        "static": STATIC_PATH,
        "version": __version__,
        "service_url": (settings.public_url or str(request.base_url)).rstrip("/"),
        "problems": [],
    }


def refusal_page(request: Request, settings: Settings, error: HbenchError) -> HTMLResponse:
    """A refusal raised before a page could render itself, shown on a page of its own."""
    problems = list(error.problems)
    context = {**layout(request, settings, None, False, ""), "problems": problems}
    html = environment.get_template("refused.html").render(context)
    return HTMLResponse(html, status_code=page_status(problems[0].code), headers=SECURITY_HEADERS)
