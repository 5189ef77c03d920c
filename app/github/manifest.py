"""The GitHub App's manifest, and GitHub's manifest flow that turns it into an App.

`app_manifest` says what the App needs, from the code that needs it: the events its
webhook routes (`app.github.behaviours.BEHAVIOURS`) and the permissions those behaviours
and the data-repository writer use (docs/github-app.md). `hbench-app github-app create`
(`app.github.setup`) posts it to GitHub from the operator's browser; GitHub creates the
App and sends the browser back with a one-time code, which `convert` exchanges for the
App's id, private key, webhook secret and OAuth client (`POST /app-manifests/{code}/
conversions`, no authentication), once, within an hour of its making.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from app.auth.sessions import CALLBACK_PATH
from app.github.behaviours import BEHAVIOURS
from app.settings import env_name
from hbench.errors import HbenchError

WEBHOOK_PATH = "/api/github/webhooks"
PERMISSIONS = {
    "issues": "write",  # react to and answer /hbench comments
    "pull_requests": "write",  # the same on pull requests
    "checks": "write",  # the registry check run on data-repository pull requests
    "contents": "write",  # read a pull request's registry files; push the data repository
    "metadata": "read",  # collaborators' permissions
}
"""What the App may do in the repositories it is installed on."""
INSTALLATION_EVENTS = frozenset({"installation", "installation_repositories"})
"""Events every App receives without subscribing to them."""
TIMEOUT_SECONDS = 30.0


def events() -> list[str]:
    """The webhook events the App acts on and must subscribe to."""
    return sorted(set(BEHAVIOURS.events()) - INSTALLATION_EVENTS)


def app_manifest(public_url: str, *, name: str, redirect_url: str) -> dict[str, Any]:
    """The manifest of an App served at `public_url`; GitHub sends the browser that
    created it to `redirect_url` with the code `convert` takes."""
    base = public_url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "hook_attributes": {"url": f"{base}{WEBHOOK_PATH}", "active": True},
        "redirect_url": redirect_url,
        "callback_urls": [f"{base}{CALLBACK_PATH}"],
        "request_oauth_on_install": False,
        "setup_on_update": False,
        "public": True,
        "default_permissions": dict(PERMISSIONS),
        "default_events": events(),
    }


@dataclass(frozen=True)
class AppCredentials:
    """What GitHub hands over once for an App made from a manifest."""

    id: int
    slug: str
    html_url: str
    private_key: str
    webhook_secret: str
    client_id: str
    client_secret: str

    def settings(self) -> dict[str, str]:
        """The service's settings these fill in, by their environment names."""
        return {
            env_name("github_app_id"): str(self.id),
            env_name("github_private_key"): self.private_key,
            env_name("github_webhook_secret"): self.webhook_secret,
            env_name("github_client_id"): self.client_id,
            env_name("github_client_secret"): self.client_secret,
        }


def convert(api_url: str, code: str) -> AppCredentials:
    """Exchange the manifest flow's code for the new App's credentials."""
    url = f"{api_url.rstrip('/')}/app-manifests/{code}/conversions"
    try:
        answer = httpx.post(
            url, headers={"accept": "application/vnd.github+json"}, timeout=TIMEOUT_SECONDS
        )
    except httpx.HTTPError as error:
        message = f"GitHub could not be reached to finish the App ({type(error).__name__})"
        raise HbenchError("github-app-manifest-failed", message) from None
    if answer.status_code != httpx.codes.CREATED:
        message = (
            f"GitHub answered {answer.status_code} to the manifest's code: it works once, "
            "within an hour; run `hbench-app github-app create` again"
        )
        raise HbenchError("github-app-manifest-failed", message)
    body = answer.json()
    try:
        return AppCredentials(
            id=int(body["id"]), slug=str(body["slug"]), html_url=str(body["html_url"]),
            private_key=str(body["pem"]), webhook_secret=str(body["webhook_secret"]),
            client_id=str(body["client_id"]), client_secret=str(body["client_secret"]),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError):
        message = "GitHub's answer to the manifest's code lacks the App's credentials"
        raise HbenchError("github-app-manifest-failed", message) from None
