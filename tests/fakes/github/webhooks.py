"""Webhook deliveries as GitHub makes them: a JSON body, the event and delivery headers,
and `X-Hub-Signature-256`, the HMAC-SHA256 of the raw body under the webhook secret.

Payloads are whole, every field GitHub's schemas for the event and action require
(`payloads`; `tests/app/github/test_webhook_schemas.py` checks each builder here against
`@octokit/webhooks-schemas`); `issue_comment` is built from a comment the fake holds, so
the service's reactions and replies land on it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient
from httpx2 import Response

from app.github.manifest import events
from tests.fakes.github.payloads import (
    MADE,
    comment_json,
    installation_json,
    installation_lite,
    issue_json,
    pull_request_json,
    repository_brief,
    repository_json,
    user_json,
)
from tests.fakes.github.state import (
    FakeComment,
    FakeGitHub,
    FakeInstallation,
    FakePull,
    FakeRepo,
    FakeUser,
)

WEBHOOK_PATH = "/api/github/webhooks"


def signature(secret: str, body: bytes) -> str:
    """The value of `X-Hub-Signature-256` for a body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery_id: str
    body: bytes
    headers: dict[str, str]

    def with_headers(self, **changes: str | None) -> Delivery:
        """The same delivery with headers changed (`None` removes one). Header names
        are given with underscores: `x_hub_signature_256="sha1=…"`."""
        headers = dict(self.headers)
        for name, value in changes.items():
            header = name.replace("_", "-")
            if value is None:
                headers.pop(header, None)
            else:
                headers[header] = value
        return Delivery(self.event, self.delivery_id, self.body, headers)


def delivery(
    fake: FakeGitHub,
    event: str,
    payload: dict[str, Any],
    *,
    delivery_id: str | None = None,
    secret: str | None = None,
) -> Delivery:
    """A delivery of `payload`, signed with the App's webhook secret (or `secret`)."""
    body = json.dumps(payload).encode()
    guid = delivery_id or str(uuid.uuid4())
    headers = {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/fake",
        "x-github-event": event,
        "x-github-delivery": guid,
        "x-github-hook-id": "1",
        "x-github-hook-installation-target-type": "integration",
        "x-github-hook-installation-target-id": str(fake.app.id),
        "x-hub-signature-256": signature(secret or fake.app.webhook_secret, body),
    }
    return Delivery(event, guid, body, headers)


def deliver(client: TestClient, sent: Delivery) -> Response:
    """POST a delivery to the service, as GitHub would."""
    return client.post(WEBHOOK_PATH, content=sent.body, headers=sent.headers)


def installation_of(fake: FakeGitHub, repo: FakeRepo) -> FakeInstallation:
    found = next((i for i in fake.installations.values() if i.covers(repo)), None)
    if found is None:
        raise ValueError(f"the App is not installed on {repo.full_name}")
    return found


def issue_comment_payload(
    fake: FakeGitHub,
    comment: FakeComment,
    *,
    action: str = "created",
    pull_request: bool = True,
) -> dict[str, Any]:
    """`issue_comment` for a comment the fake holds (on a pull request by default)."""
    payload: dict[str, Any] = {"action": action}
    if action == "edited":
        payload["changes"] = {"body": {"from": "an earlier text"}}
    return payload | {
        "issue": issue_json(
            fake, comment.repo, comment.issue_number, comment.user, pull_request=pull_request
        ),
        "comment": comment_json(fake, comment),
        "repository": repository_json(fake, comment.repo),
        "sender": user_json(fake, comment.user),
        "installation": installation_lite(installation_of(fake, comment.repo)),
    }


def installation_payload(
    fake: FakeGitHub,
    installation: FakeInstallation,
    sender: FakeUser,
    *,
    action: str = "created",
) -> dict[str, Any]:
    """`installation` (created, deleted, suspend, unsuspend, new_permissions_accepted) for
    an installation; `sender` suspended it, for `suspend`."""
    repos = [repo for repo in fake.repos.values() if installation.covers(repo)]
    suspended_by = sender if action == "suspend" else None
    payload: dict[str, Any] = {
        "action": action,
        "installation": installation_json(fake, installation, suspended_by=suspended_by),
        "repositories": [repository_brief(repo) for repo in repos],
        "sender": user_json(fake, sender),
    }
    if action != "created":
        payload["requester"] = None
    return payload


def installation_repositories_payload(
    fake: FakeGitHub,
    installation: FakeInstallation,
    sender: FakeUser,
    *,
    added: Sequence[FakeRepo] = (),
    removed: Sequence[FakeRepo] = (),
) -> dict[str, Any]:
    """`installation_repositories`: repositories added to or removed from an installation
    (GitHub tells of one or the other in a delivery, never both)."""
    if added and removed:
        raise ValueError("GitHub sends repositories added and removed in separate deliveries")
    return {
        "action": "added" if added else "removed",
        "installation": installation_json(fake, installation),
        "repository_selection": "all" if installation.repository_ids is None else "selected",
        "repositories_added": [repository_brief(repo) for repo in added],
        "repositories_removed": [repository_brief(repo) for repo in removed],
        "requester": None,
        "sender": user_json(fake, sender),
    }


def pull_request_payload(
    fake: FakeGitHub,
    repo: FakeRepo,
    pull: FakePull,
    *,
    action: str = "opened",
    before: str | None = None,
) -> dict[str, Any]:
    """`pull_request` for a pull request the fake holds (its head in the same repository);
    `synchronize` says the head moved from `before` (by default, the base's commit)."""
    pull_json = pull_request_json(fake, repo, pull)
    payload: dict[str, Any] = {"action": action, "number": pull.number}
    if action == "synchronize":
        payload |= {"before": before or pull_json["base"]["sha"], "after": pull.head_sha}
    return payload | {
        "pull_request": pull_json,
        "repository": repository_json(fake, repo),
        "sender": user_json(fake, pull.author),
        "installation": installation_lite(installation_of(fake, repo)),
    }


def ping_payload(fake: FakeGitHub, service_url: str) -> dict[str, Any]:
    """`ping`: what GitHub sends the App's webhook when it is made or its address changes."""
    hook_id = 1  # X-GitHub-Hook-ID, as `delivery` sends it
    hook_url = f"{fake.url}/api/v3/app/hook"
    return {
        "zen": "Keep it logically awesome.",
        "hook_id": hook_id,
        "hook": {
            "type": "App",
            "id": hook_id,
            "name": "web",
            "active": True,
            "app_id": fake.app.id,
            "events": events(),
            "config": {
                "content_type": "json",
                "url": f"{service_url}{WEBHOOK_PATH}",
                "insecure_ssl": "0",
            },
            "updated_at": MADE,
            "created_at": MADE,
            "url": f"{hook_url}/config",
            "ping_url": f"{hook_url}/pings",
            "deliveries_url": f"{hook_url}/deliveries",
        },
    }
