"""Webhook deliveries as GitHub makes them: a JSON body, the event and delivery headers,
and `X-Hub-Signature-256`, the HMAC-SHA256 of the raw body under the webhook secret.

Payloads carry the fields GitHub's documented examples (octokit/webhooks) have for these
events and actions, cut to what a reader of them needs; `issue_comment` is built from a
comment the fake holds, so the service's reactions and replies land on it.
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
    issue: dict[str, Any] = {
        "number": comment.issue_number,
        "title": "Add a run",
        "state": "open",
        "locked": False,
        "user": comment.user.to_json(),
    }
    if pull_request:
        issue["pull_request"] = {
            "url": f"{fake.url}/api/v3/repos/{comment.repo.full_name}/pulls/{comment.issue_number}"
        }
    payload: dict[str, Any] = {
        "action": action,
        "issue": issue,
        "comment": comment.to_json(fake.app),
        "repository": comment.repo.to_json(),
        "sender": comment.user.to_json(),
        "installation": {"id": installation_of(fake, comment.repo).id},
    }
    if action == "edited":
        payload["changes"] = {"body": {"from": "an earlier text"}}
    return payload


def installation_payload(
    fake: FakeGitHub,
    installation: FakeInstallation,
    sender: FakeUser,
    *,
    action: str = "created",
) -> dict[str, Any]:
    """`installation` (created, deleted, suspend, unsuspend) for an installation."""
    repos = [repo for repo in fake.repos.values() if installation.covers(repo)]
    return {
        "action": action,
        "installation": installation_json(fake, installation),
        "repositories": [repository_brief(repo) for repo in repos],
        "sender": sender.to_json(),
    }


def installation_repositories_payload(
    fake: FakeGitHub,
    installation: FakeInstallation,
    sender: FakeUser,
    *,
    added: Sequence[FakeRepo] = (),
    removed: Sequence[FakeRepo] = (),
) -> dict[str, Any]:
    """`installation_repositories`: repositories added to or removed from an installation."""
    return {
        "action": "added" if added else "removed",
        "installation": installation_json(fake, installation),
        "repository_selection": "all" if installation.repository_ids is None else "selected",
        "repositories_added": [repository_brief(repo) for repo in added],
        "repositories_removed": [repository_brief(repo) for repo in removed],
        "sender": sender.to_json(),
    }


def installation_json(fake: FakeGitHub, installation: FakeInstallation) -> dict[str, Any]:
    return {
        "id": installation.id,
        "account": installation.account.to_json(),
        "app_id": fake.app.id,
        "app_slug": fake.app.slug,
        "target_type": installation.account.type,
        "repository_selection": "all" if installation.repository_ids is None else "selected",
    }


def repository_brief(repo: FakeRepo) -> dict[str, Any]:
    return {"id": repo.id, "name": repo.name, "full_name": repo.full_name, "private": repo.private}


def pull_request_payload(
    fake: FakeGitHub, repo: FakeRepo, pull: FakePull, *, action: str = "opened"
) -> dict[str, Any]:
    """`pull_request` for a pull request the fake holds (its head in the same repository)."""
    return {
        "action": action,
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "state": "open",
            "title": "Change the registry",
            "user": pull.author.to_json(),
            "head": {"sha": pull.head_sha, "ref": "change", "repo": repo.to_json()},
            "base": {"ref": "main", "repo": repo.to_json()},
        },
        "repository": repo.to_json(),
        "sender": pull.author.to_json(),
        "installation": {"id": installation_of(fake, repo).id},
    }
