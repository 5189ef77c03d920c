"""`hbench-app github-app create`: make the service's GitHub App with GitHub's manifest
flow, from the operator's browser, and write the settings it gives to an env file.

A page on loopback holds a form with the App's manifest (`app.github.manifest`); sent
from the operator's browser, where they are signed in to GitHub, it asks GitHub to create
the App, and GitHub sends the browser back to `/done` on loopback with a one-time code
and the `state` the form carried. The code is exchanged for the App's id, private key,
webhook secret and OAuth client, which go into the env file (owner-only) and nowhere
else: not the terminal, not the page.
"""

from __future__ import annotations

import hmac
import html
import json
import os
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from app.github.manifest import AppCredentials, app_manifest, convert
from hbench.errors import HbenchError

DONE_PATH = "/done"


def new_app_address(web_url: str, org: str | None, state: str) -> str:
    """Where GitHub takes a manifest: the operator's own Apps, or an organisation's."""
    owner = f"/organizations/{org}" if org else ""
    return f"{web_url.rstrip('/')}{owner}/settings/apps/new?state={state}"


def form_page(action: str, manifest: dict[str, object]) -> str:
    value = html.escape(json.dumps(manifest), quote=True)
    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>Create the hbench App</title>"
        "<h1>Create the hbench GitHub App</h1>"
        f"<p>This sends the App's manifest to GitHub, as the account you are signed in "
        f"with there. GitHub shows what the App may do before it makes it.</p>"
        f'<form method=post action="{html.escape(action, quote=True)}">'
        f'<input type=hidden name=manifest value="{value}">'
        "<button type=submit>Create the App on GitHub</button></form>"
    )


def env_text(credentials: AppCredentials) -> str:
    """The settings as an env file: one `NAME="value"` a line, the key's lines inside its
    quotes (as Compose's `env_file` and python-dotenv read them)."""
    lines = []
    for name, value in credentials.settings().items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{name}="{escaped}"')
    return "\n".join(lines) + "\n"


def write_env_file(path: Path, text: str) -> None:
    """Write the file readable by its owner alone, whole or not at all."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    temporary.replace(path)


class ManifestFlow:
    """The loopback side of the flow: the form's page, and the return with the code."""

    def __init__(
        self,
        *,
        public_url: str,
        name: str,
        org: str | None,
        web_url: str,
        api_url: str,
        env_file: Path,
        port: int = 0,
    ) -> None:
        self.state = secrets.token_urlsafe(24)
        self.api_url = api_url
        self.env_file = env_file
        self.finished = threading.Event()
        self.credentials: AppCredentials | None = None
        self.error: HbenchError | None = None
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        host, bound = self.server.server_address[:2]
        self.address = f"http://{host!s}:{bound}"
        manifest = app_manifest(public_url, name=name, redirect_url=self.address + DONE_PATH)
        self.page = form_page(new_app_address(web_url, org, self.state), manifest)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        flow = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                target = urlsplit(self.path)
                if target.path == "/":
                    self._answer(200, flow.page)
                elif target.path == DONE_PATH:
                    status, text = flow.finish(parse_qs(target.query))
                    self._answer(status, text)
                else:
                    self._answer(404, "not here")

            def _answer(self, status: int, text: str) -> None:
                body = text.encode()
                self.send_response(status)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.send_header("cache-control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet: the code in the return address is a credential until used."""

        return Handler

    def finish(self, query: dict[str, list[str]]) -> tuple[int, str]:
        """The browser's return from GitHub: check the state, exchange the code, write
        the settings. Answered once; the page says what to do next."""
        if self.finished.is_set():
            return 409, "This App is made already."
        state = (query.get("state") or [""])[0]
        code = (query.get("code") or [""])[0]
        if not hmac.compare_digest(state.encode(), self.state.encode()) or not code:
            return 400, "This return is not from the form this command showed."
        try:
            self.credentials = convert(self.api_url, code)
            write_env_file(self.env_file, env_text(self.credentials))
        except HbenchError as error:
            self.error = error
            self.finished.set()
            return 502, html.escape(error.detail)
        self.finished.set()
        made = html.escape(self.credentials.html_url, quote=True)
        return 200, (
            f'<p>The App is made: <a href="{made}">{made}</a>. Its settings are in '
            f"{html.escape(str(self.env_file))}. Install it on the data repository next.</p>"
        )

    def run(self, *, timeout: float, announce: Callable[[str], object]) -> AppCredentials:
        """Serve until the App is made (or `timeout` seconds pass)."""
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            announce(
                f"Open {self.address}/ in a browser signed in to GitHub, and press the button."
            )
            if not self.finished.wait(timeout):
                message = f"no App was made within {timeout:.0f} s; run the command again"
                raise HbenchError("github-app-manifest-failed", message)
        finally:
            self.server.shutdown()
            self.server.server_close()
        if self.error is not None:
            raise self.error
        if self.credentials is None:  # finished only with credentials or an error
            raise HbenchError("github-app-manifest-failed", "the App's return carried nothing")
        return self.credentials
