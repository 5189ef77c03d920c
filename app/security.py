"""Security headers on every response the service sends: a content security policy that
allows only the service's own scripts, styles and frames, and the headers that stop
sniffing, framing and referrer leaks.

A pure ASGI middleware, so streamed bodies (uploads, static files) pass through untouched;
it only adds headers to the response's start message. Swagger UI at `/docs` is the one
page that needs more: FastAPI serves its page with an inline start-up script and loads
the UI from a CDN, so `/docs` gets a policy naming that CDN and the hash of that one
script, and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Mapping

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.types import ASGIApp, Message, Receive, Scope, Send

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
"""Everything the service serves: its own files only, never inline script or style."""

SWAGGER_CDN = "https://cdn.jsdelivr.net"
"""Where FastAPI's Swagger UI page loads the UI's script and stylesheet from."""
SWAGGER_FAVICON = "https://fastapi.tiangolo.com"

HSTS = "max-age=31536000; includeSubDomains"
"""A year: once a browser has seen the service over https, it never tries http again."""

FIXED_HEADERS: dict[str, str] = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}

INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def script_hash(script: str) -> str:
    """A CSP source for one inline script: `'sha256-<base64 digest>'`."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def inline_scripts(html: str) -> list[str]:
    """The bodies of a page's inline `<script>` elements (those without a `src`)."""
    return INLINE_SCRIPT.findall(html)


def docs_policy(app: FastAPI) -> str:
    """The policy for the Swagger UI page the app serves: the CDN's files, the page's own
    start-up script by its hash, and calls to the service itself for the OpenAPI schema."""
    page = get_swagger_ui_html(
        openapi_url=app.openapi_url or "/openapi.json",
        title=f"{app.title} - Swagger UI",
        oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
        init_oauth=app.swagger_ui_init_oauth,
        swagger_ui_parameters=app.swagger_ui_parameters,
    )
    hashes = " ".join(script_hash(s) for s in inline_scripts(bytes(page.body).decode("utf-8")))
    return (
        f"default-src 'self'; script-src 'self' {SWAGGER_CDN} {hashes}; "
        f"style-src 'self' {SWAGGER_CDN}; img-src 'self' data: {SWAGGER_FAVICON}; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )


class SecurityHeaders:
    """Add the policy and the fixed headers to every HTTP response.

    `policies` maps exact paths to their own policy (`/docs`); `hsts` adds
    Strict-Transport-Security, for a service reached over https.
    """

    def __init__(
        self, app: ASGIApp, *, policies: Mapping[str, str] | None = None, hsts: bool = False
    ) -> None:
        self.app = app
        self.policies = dict(policies or {})
        self.hsts = hsts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = self.policies.get(scope["path"], POLICY)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(self._headers(message.get("headers", []), policy))
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _headers(
        self, headers: Iterable[tuple[bytes, bytes]], policy: str
    ) -> Iterable[tuple[bytes, bytes]]:
        added = {"content-security-policy": policy, **FIXED_HEADERS}
        if self.hsts:
            added["strict-transport-security"] = HSTS
        # A handler that sets one of these headers itself (a page with a policy of its
        # own) keeps its value; the service's fills in the rest.
        for name, value in headers:
            added.pop(name.decode("latin-1").lower(), None)
            yield name, value
        for header, text in added.items():
            yield header.encode("latin-1"), text.encode("latin-1")


def install_security_headers(app: FastAPI, *, hsts: bool) -> None:
    """Send the security headers on every response of the app, `/docs` with its own policy."""
    policies = {app.docs_url: docs_policy(app)} if app.docs_url else {}
    app.add_middleware(SecurityHeaders, policies=policies, hsts=hsts)
