"""`POST /api/github/webhooks`: where GitHub delivers the App's events.

Verified at the edge, in this order, before anything is parsed: the service has a
webhook secret; the raw body is at most 25 MiB (GitHub's own cap); `X-Hub-Signature-256`
is `sha256=` and the HMAC-SHA256 of the raw bytes under the secret (compared in constant
time; the legacy SHA-1 header is not accepted); the delivery is for our App
(`X-GitHub-Hook-Installation-Target-ID`).

`X-GitHub-Event` is GitHub's to name (`projects_v2_item`, `sub_issues`, and new ones as
GitHub adds them), so it is read as an opaque header value, only bounded; a delivery of an
event or action no behaviour handles is answered 200 `ignored` and not recorded. Then the
delivery id is recorded, once: GitHub redelivers with the same id, and a delivery seen
before is answered 200 and not acted on. The answer (202) goes out at once; the behaviours
run afterwards, in the background. A delivery whose handling failed is forgotten, so a
redelivery is acted on again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from datetime import datetime, timedelta
from typing import Literal

from fastapi import APIRouter, BackgroundTasks, Request, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from starlette.concurrency import run_in_threadpool

from app.clock import ClockDep
from app.db.models import WebhookDelivery
from app.db.session import Database
from app.dependencies import DatabaseDep, SettingsDep
from app.errors import error_responses
from app.github.behaviours import BEHAVIOURS
from app.github.jobs import JobActionsDep
from app.github.port import GitHubDep
from app.github.routing import Context, Event, EventRouter
from app.http.bodies import WEBHOOK_MAX_BYTES
from app.settings import Settings
from hbench.codes import Area
from hbench.errors import HbenchError

log = logging.getLogger(__name__)

DELIVERY_RETENTION = timedelta(days=7)
EVENT_NAME = re.compile(r"^[!-~]{1,64}$")
"""Visible ASCII, no spaces or control characters (it is logged), as long as the recorded
delivery's column: GitHub's names are no shape of ours to guess, so this only bounds them."""
DELIVERY_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")

router = APIRouter(prefix="/api/github", tags=["GitHub App"])


class WebhookAnswer(BaseModel):
    """What the service did with a delivery."""

    status: Literal["accepted", "duplicate", "ignored"]
    delivery: str
    event: str


@router.post(
    "/webhooks",
    summary="Receive a GitHub webhook delivery (GitHub only)",
    description="GitHub delivers the App's events here, signed with the webhook secret "
    "(`X-Hub-Signature-256`). A new delivery is answered 202 and acted on in the "
    "background; a delivery seen before (same `X-GitHub-Delivery`) is answered 200 "
    "`duplicate`, and one of an event or action the App does not act on 200 `ignored`.",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=WebhookAnswer,
    responses={
        200: {
            "model": WebhookAnswer,
            "description": "A delivery seen before, or of an event the App does not act on.",
        },
        **error_responses(Area.WEBHOOK),
    },
)
async def receive_webhook(
    request: Request,
    *,
    background: BackgroundTasks,
    settings: SettingsDep,
    database: DatabaseDep,
    github: GitHubDep,
    clock: ClockDep,
    job_actions: JobActionsDep,
) -> JSONResponse:
    secret = settings.github_webhook_secret
    if secret is None:
        raise HbenchError(
            "webhook-not-configured",
            "this service takes no webhooks: it runs without HBENCH_GITHUB_WEBHOOK_SECRET",
        )
    body = await read_body(request)
    verify_signature(secret.get_secret_value(), body, request.headers.get("x-hub-signature-256"))
    check_target(settings, request.headers.get("x-github-hook-installation-target-id"))
    event = parse_event(
        request.headers.get("x-github-event"), request.headers.get("x-github-delivery"), body
    )
    answer = WebhookAnswer(status="accepted", delivery=event.delivery_id, event=event.name)
    if not BEHAVIOURS.handlers_for(event):
        ignored = answer.model_copy(update={"status": "ignored"})
        return JSONResponse(ignored.model_dump(), status_code=status.HTTP_200_OK)
    if not await run_in_threadpool(record_delivery, database, event, clock()):
        duplicate = answer.model_copy(update={"status": "duplicate"})
        return JSONResponse(duplicate.model_dump(), status_code=status.HTTP_200_OK)
    context = Context(github, database, settings, clock, job_actions)
    background.add_task(handle, BEHAVIOURS, event, context)
    return JSONResponse(answer.model_dump(), status_code=status.HTTP_202_ACCEPTED)


async def read_body(request: Request) -> bytes:
    """The raw body, refused past `WEBHOOK_MAX_BYTES` before more of it is read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > WEBHOOK_MAX_BYTES:
        raise too_large()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > WEBHOOK_MAX_BYTES:
            raise too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def too_large() -> HbenchError:
    return HbenchError(
        "webhook-too-large", f"the delivery is larger than {WEBHOOK_MAX_BYTES // 2**20} MiB"
    )


def verify_signature(secret: str, body: bytes, header: str | None) -> None:
    """Refuse a body whose `X-Hub-Signature-256` is missing, not SHA-256, or wrong."""
    if not header:
        raise HbenchError(
            "webhook-signature-missing", "the delivery carries no X-Hub-Signature-256 header"
        )
    algorithm, equals, digest = header.partition("=")
    if algorithm != "sha256" or not equals:
        raise HbenchError(
            "webhook-signature-unsupported",
            "X-Hub-Signature-256 must be `sha256=<hex digest>`; SHA-1 signatures are not taken",
        )
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), digest.encode("utf-8", "replace")):
        raise HbenchError(
            "webhook-signature-invalid",
            "the delivery's signature does not match its body under the webhook secret",
        )


def check_target(settings: Settings, target_id: str | None) -> None:
    """A signed delivery for another App (sharing a secret by mistake) is not ours."""
    if target_id is None or target_id != str(settings.github_app_id):
        raise HbenchError(
            "webhook-app-mismatch",
            f"the delivery is for App {target_id or '(none named)'}, not this service's App "
            f"({settings.github_app_id})",
        )


def parse_event(name: str | None, delivery_id: str | None, body: bytes) -> Event:
    if not name or not EVENT_NAME.fullmatch(name):
        raise HbenchError("webhook-payload-invalid", "X-GitHub-Event is missing or malformed")
    if not delivery_id or not DELIVERY_ID.fullmatch(delivery_id):
        raise HbenchError("webhook-payload-invalid", "X-GitHub-Delivery is missing or malformed")
    try:
        payload = json.loads(body)
    except ValueError:
        raise HbenchError("webhook-payload-invalid", "the delivery's body is not JSON") from None
    if not isinstance(payload, dict):
        raise HbenchError("webhook-payload-invalid", "the delivery's body is not a JSON object")
    action = payload.get("action")
    return Event(name, action if isinstance(action, str) else None, delivery_id, payload)


def record_delivery(database: Database, event: Event, now: datetime) -> bool:
    """Record a delivery id; False if it was recorded before. Ids older than the
    retention are dropped on the way."""
    with database.session() as session:
        session.execute(
            delete(WebhookDelivery).where(WebhookDelivery.received_at < now - DELIVERY_RETENTION)
        )
        session.add(WebhookDelivery(id=event.delivery_id, event=event.name, received_at=now))
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            return False
    return True


def forget_delivery(database: Database, delivery_id: str) -> None:
    with database.session() as session:
        session.execute(delete(WebhookDelivery).where(WebhookDelivery.id == delivery_id))
        session.commit()


async def handle(behaviours: EventRouter, event: Event, context: Context) -> None:
    """Run the behaviours for a delivery; forget the delivery if one of them failed."""
    try:
        await behaviours.dispatch(event, context)
    except Exception:
        log.warning(
            "delivery %s (%s) failed; a redelivery will be acted on", event.delivery_id, event.name
        )
        await run_in_threadpool(forget_delivery, context.database, event.delivery_id)
