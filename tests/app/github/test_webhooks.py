"""The webhook edge: signed deliveries for our App are taken in once and answered at once;
forged, unsigned, foreign and replayed ones change nothing."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.clock import get_clock
from app.db.models import WebhookDelivery, utcnow
from app.main import create_app
from app.settings import Settings
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeComment, FakeRepo
from tests.fakes.github.webhooks import (
    WEBHOOK_PATH,
    Delivery,
    deliver,
    delivery,
    issue_comment_payload,
    ping_payload,
)

from ..conftest import LOCAL
from .conftest import SERVICE_URL


@pytest.fixture
def thread(fake: FakeGitHub) -> FakeRepo:
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets")
    fake.install(owner)
    return repo


@pytest.fixture
def help_comment(fake: FakeGitHub, thread: FakeRepo) -> FakeComment:
    return fake.post_comment(thread, 12, fake.add_user("alice"), "/hbench help")


def comment_delivery(fake: FakeGitHub, comment: FakeComment) -> Delivery:
    return delivery(fake, "issue_comment", issue_comment_payload(fake, comment))


def deliveries(db: Session) -> list[str]:
    db.expire_all()
    return list(db.scalars(select(WebhookDelivery.id)))


def test_a_signed_delivery_is_accepted_and_acted_on(
    service_client: TestClient, fake: FakeGitHub, help_comment: FakeComment, db: Session
) -> None:
    sent = comment_delivery(fake, help_comment)
    answer = deliver(service_client, sent)
    assert answer.status_code == 202
    assert answer.json() == {
        "status": "accepted",
        "delivery": sent.delivery_id,
        "event": "issue_comment",
    }
    assert deliveries(db) == [sent.delivery_id]
    assert len(fake.replies_on(help_comment.repo, 12)) == 1


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"x_hub_signature_256": None}, 401, "webhook-signature-missing"),
        ({"x_hub_signature_256": ""}, 401, "webhook-signature-missing"),
        ({"x_hub_signature_256": "sha256=" + "0" * 64}, 401, "webhook-signature-invalid"),
        ({"x_hub_signature_256": "sha256"}, 401, "webhook-signature-unsupported"),
        ({"x_github_hook_installation_target_id": "99"}, 403, "webhook-app-mismatch"),
        ({"x_github_hook_installation_target_id": None}, 403, "webhook-app-mismatch"),
        ({"x_github_event": None}, 400, "webhook-payload-invalid"),
        ({"x_github_event": "issue comment"}, 400, "webhook-payload-invalid"),
        ({"x_github_event": "e" * 65}, 400, "webhook-payload-invalid"),
        ({"x_github_delivery": None}, 400, "webhook-payload-invalid"),
        ({"x_github_delivery": "../x"}, 400, "webhook-payload-invalid"),
    ],
)
def test_deliveries_that_fail_the_edge_change_nothing(
    service_client: TestClient,
    *,
    fake: FakeGitHub,
    help_comment: FakeComment,
    db: Session,
    change: dict[str, str | None],
    status: int,
    code: str,
) -> None:
    sent = comment_delivery(fake, help_comment).with_headers(**change)
    answer = deliver(service_client, sent)
    assert answer.status_code == status
    assert answer.json()["code"] == code
    assert deliveries(db) == []
    assert fake.replies_on(help_comment.repo, 12) == []
    assert help_comment.reactions == []


def test_a_sha1_signature_is_not_taken_even_when_right(
    service_client: TestClient, fake: FakeGitHub, help_comment: FakeComment, db: Session
) -> None:
    sent = comment_delivery(fake, help_comment)
    sha1 = hmac.new(fake.app.webhook_secret.encode(), sent.body, hashlib.sha1).hexdigest()
    answer = deliver(service_client, sent.with_headers(x_hub_signature_256=f"sha1={sha1}"))
    assert answer.status_code == 401
    assert answer.json()["code"] == "webhook-signature-unsupported"
    assert deliveries(db) == []


def test_a_delivery_signed_with_another_secret_is_refused(
    service_client: TestClient, fake: FakeGitHub, help_comment: FakeComment, db: Session
) -> None:
    payload = issue_comment_payload(fake, help_comment)
    forged = delivery(fake, "issue_comment", payload, secret="not-the-webhook-secret")
    answer = deliver(service_client, forged)
    assert answer.status_code == 401
    assert answer.json()["code"] == "webhook-signature-invalid"
    assert deliveries(db) == []


def test_a_body_changed_after_signing_is_refused(
    service_client: TestClient, fake: FakeGitHub, help_comment: FakeComment
) -> None:
    sent = comment_delivery(fake, help_comment)
    tampered = Delivery(
        sent.event, sent.delivery_id, sent.body.replace(b"help", b"hel "), sent.headers
    )
    answer = deliver(service_client, tampered)
    assert answer.json()["code"] == "webhook-signature-invalid"
    assert fake.replies_on(help_comment.repo, 12) == []


def test_a_body_that_is_not_json_is_refused_after_its_signature(
    service_client: TestClient, fake: FakeGitHub, db: Session
) -> None:
    sent = delivery(fake, "ping", ping_payload(fake, SERVICE_URL))
    broken = b"{not json"
    answer = deliver(
        service_client,
        Delivery(sent.event, sent.delivery_id, broken, sent.headers).with_headers(
            x_hub_signature_256="sha256="
            + hmac.new(fake.app.webhook_secret.encode(), broken, hashlib.sha256).hexdigest()
        ),
    )
    assert answer.status_code == 400
    assert answer.json()["code"] == "webhook-payload-invalid"
    assert deliveries(db) == []


def test_a_body_past_githubs_cap_is_refused_unread(
    service_client: TestClient, fake: FakeGitHub
) -> None:
    sent = delivery(fake, "ping", ping_payload(fake, SERVICE_URL))
    sent = sent.with_headers(content_length=str(26 * 1024 * 1024))
    answer = service_client.post(WEBHOOK_PATH, content=sent.body, headers=sent.headers)
    assert answer.status_code == 413
    assert answer.json()["code"] == "webhook-too-large"


def test_a_delivery_no_behaviour_acts_on_is_ignored_unrecorded(
    service_client: TestClient, fake: FakeGitHub, db: Session
) -> None:
    sent = delivery(fake, "ping", ping_payload(fake, SERVICE_URL))
    answer = deliver(service_client, sent)
    assert (answer.status_code, answer.json()["status"]) == (200, "ignored")
    assert deliveries(db) == []
    assert fake.seen == []


def test_a_replayed_delivery_is_ignored(
    service_client: TestClient, fake: FakeGitHub, help_comment: FakeComment, db: Session
) -> None:
    sent = comment_delivery(fake, help_comment)
    assert deliver(service_client, sent).status_code == 202
    reply = fake.replies_on(help_comment.repo, 12)[0]

    again = deliver(service_client, sent)
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert deliveries(db) == [sent.delivery_id]
    assert fake.replies_on(help_comment.repo, 12) == [reply]
    assert reply.edits == 0
    assert fake.reactions_on(help_comment) == ["eyes", "rocket"]


def test_a_delivery_whose_handling_failed_is_taken_again(
    service_client: TestClient, fake: FakeGitHub, db: Session
) -> None:
    # The App is not installed on this repository, so replying fails.
    elsewhere = fake.add_repo(fake.add_user("someone"), "stuff")
    comment = fake.post_comment(elsewhere, 1, fake.add_user("bob"), "/hbench help")
    installation = fake.install(elsewhere.owner)
    sent = comment_delivery(fake, comment)
    del fake.installations[installation.id]
    assert deliver(service_client, sent).status_code == 202
    assert deliveries(db) == []  # forgotten, so a redelivery is acted on
    assert fake.replies_on(elsewhere, 1) == []

    fake.installations[installation.id] = installation
    assert deliver(service_client, sent).status_code == 202
    assert len(fake.replies_on(elsewhere, 1)) == 1


def test_delivery_ids_are_kept_a_week(
    service: FastAPI, fake: FakeGitHub, help_comment: FakeComment, db: Session
) -> None:
    now = [utcnow()]
    service.dependency_overrides[get_clock] = lambda: lambda: now[0]
    with TestClient(service, **LOCAL) as client:
        first = comment_delivery(fake, help_comment)
        deliver(client, first)
        now[0] += timedelta(days=6)
        second = comment_delivery(fake, help_comment)
        deliver(client, second)
        assert set(deliveries(db)) == {first.delivery_id, second.delivery_id}
        now[0] += timedelta(days=2)
        third = comment_delivery(fake, help_comment)
        deliver(client, third)
        assert set(deliveries(db)) == {second.delivery_id, third.delivery_id}


@pytest.fixture
def local_client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), **LOCAL) as client:
        yield client


def test_local_mode_takes_no_webhooks(local_client: TestClient, fake: FakeGitHub) -> None:
    answer = deliver(local_client, delivery(fake, "ping", ping_payload(fake, SERVICE_URL)))
    assert answer.status_code == 503
    assert answer.json()["code"] == "webhook-not-configured"
