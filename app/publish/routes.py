"""Publishing from Your bench: `POST /api/bench/jobs/{id}/publish`, `…/withdraw`,
`DELETE /api/bench/jobs/{id}`, and `GET /api/bench/jobs/{id}/download`.

Spec: ../shared/spec/hbench-upload-a-job.txt ("Publish it to its board") and
../shared/spec/hbench-withdraw-delete-report.txt (withdraw, delete). The router's
lifespan also runs the periodic maintenance task (`app.publish.maintenance`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Body, FastAPI, Query, Request, Security
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials

from app.auth.dependencies import CurrentAccount, bearer, current_caller
from app.bench.retention import policy_of
from app.clock import Clock, ClockDep, get_clock
from app.db.models import Account
from app.dependencies import BlobStoreDep, Resources, SessionDep, SettingsDep, app_settings
from app.errors import envelope, error_responses
from app.publish import service
from app.publish.choice import BoardChoiceError
from app.publish.maintenance import MaintenanceLoop
from app.publish.record import download_path
from app.publish.schemas import (
    BoardChoiceEnvelope,
    DeletedJob,
    DeleteRequest,
    PublishedJob,
    PublishRequest,
    WithdrawnJob,
)
from app.registry import RegistryDep
from hbench.codes import Area, codes
from hbench.errors import HbenchError

WITHDRAW = codes(
    Area.AUTH, "bench-job-not-found", "job-not-published", "job-withdrawn", "job-taken-down"
)
DELETE = codes(Area.AUTH, "bench-job-not-found", "delete-confirm-mismatch")
# Anyone may download a published job: signing in refuses only a bad token.
DOWNLOAD = (
    "token-invalid", "token-revoked", "bench-job-not-found", "job-files-hidden",
    "job-files-deleted",
)  # fmt: skip


@asynccontextmanager
async def run_maintenance_loop(app: FastAPI) -> AsyncIterator[None]:
    """Run the maintenance task in the background while the service runs."""
    settings = app_settings(app)
    resources: Resources = app.state.resources

    def now() -> datetime:
        # Asked each round, so a clock a test sets after start-up holds.
        clock: Clock = app.dependency_overrides.get(get_clock, get_clock)()
        return clock()

    loop = MaintenanceLoop(
        resources.database,
        resources.blobs,
        now,
        policy_of(settings),
        settings.maintenance_interval.total_seconds(),
    )
    loop.start()
    try:
        yield
    finally:
        loop.stop()


router = APIRouter(prefix="/api/bench", tags=["your bench"], lifespan=run_maintenance_loop)


@router.post(
    "/jobs/{job_id}/publish",
    summary="Publish a private job's score to its board",
    description="An issued run keeps the board and entry it was issued with. Any other "
    "job goes under your entry for its agent and options, on the board of the same "
    "tasks, model and settings, or on a new board. When it fits several boards, name one "
    "in `board`; without it the answer is refused with `publish-board-choice`, whose "
    "envelope carries one more field, `boards`, the boards it fits. "
    "Within the publish window (30 days after the upload), once. A job that fits no "
    "board (its `boards.notes`) is refused with its first note's code.",
    response_model=PublishedJob,
    responses=error_responses(
        Area.AUTH,
        Area.BENCH,
        Area.BOARD,
        Area.PUBLISH,
        "job-prompt-not-issued",
        "request-invalid",
    ),
)
def publish_job(
    job_id: uuid.UUID,
    *,
    account: CurrentAccount,
    session: SessionDep,
    settings: SettingsDep,
    registry: RegistryDep,
    clock: ClockDep,
    request: Annotated[PublishRequest | None, Body()] = None,
) -> PublishedJob | JSONResponse:
    try:
        done = service.publish(
            session, account, job_id,
            board=request.board if request is not None else None,
            registry=registry, policy=policy_of(settings), now=clock(),
        )  # fmt: skip
    except BoardChoiceError as choice:
        body = BoardChoiceEnvelope(**envelope(choice.problems).model_dump(), boards=choice.boards)
        return JSONResponse(body.model_dump(), status_code=409)
    run = done.run
    return PublishedJob(
        id=done.row.id,
        status=done.row.status.value,
        board=run.board,
        entry=run.entry.name,
        owner=run.entry.owner,
        run_id=run.id,
        issued=run.issued,
        opened_board=done.opened is not None,
        published_at=run.published_at,
        download=download_path(done.row.id),
    )


@router.post(
    "/jobs/{job_id}/withdraw",
    summary="Withdraw a published job's score, for good",
    response_model=WithdrawnJob,
    responses=error_responses(*WITHDRAW, "request-invalid"),
)
def withdraw_job(
    job_id: uuid.UUID, *, account: CurrentAccount, session: SessionDep, clock: ClockDep
) -> WithdrawnJob:
    row = service.withdraw(session, account, job_id, now=clock())
    return WithdrawnJob(
        id=row.id,
        status=row.status.value,
        board=row.board,
        run_id=str(row.id),
        withdrawn_at=row.withdrawn_at,
    )


@router.delete(
    "/jobs/{job_id}",
    summary="Delete a job and its files; a score it has stays on its board",
    description="Confirm with the job's name, as `?confirm=<name>` or the body "
    '`{"confirm": "<name>"}`. The job leaves Your bench, its files can no longer be '
    "downloaded (`job-files-deleted`) and leave storage after the retention period; a "
    "hidden fingerprint stays so a re-upload of a job that counted is recognised. A "
    "published job's score stays on its board, and its run's page says its files were "
    "deleted: withdraw it first to take the score off.",
    response_model=DeletedJob,
    responses=error_responses(*DELETE, "request-invalid"),
)
def delete_job(
    job_id: uuid.UUID,
    *,
    account: CurrentAccount,
    session: SessionDep,
    settings: SettingsDep,
    blobs: BlobStoreDep,
    clock: ClockDep,
    confirm: Annotated[str | None, Query(max_length=255, description="The job's name.")] = None,
    request: Annotated[DeleteRequest | None, Body()] = None,
) -> DeletedJob:
    policy = policy_of(settings)
    given = confirm if confirm is not None else (request.confirm if request else None)
    row = service.delete(
        session, account, job_id, confirm=given, blobs=blobs, policy=policy, now=clock()
    )
    purge = row.deleted_at + policy.deleted_files_retention if row.deleted_at else None
    return DeletedJob(
        id=row.id, status=row.status.value, deleted_at=row.deleted_at, files_purged_by=purge,
        score_stays_on=service.score_board(row),
    )  # fmt: skip


def optional_account(
    request: Request,
    *,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    clock: ClockDep,
) -> Account | None:
    """The signed-in account, or None for an anonymous reader; a bad token still fails."""
    try:
        return current_caller(request, session, settings, credentials, clock).account
    except HbenchError as error:
        if error.code == "auth-required":
            return None
        raise


@router.get(
    "/jobs/{job_id}/download",
    summary="Download a job's redacted files (.tar.gz)",
    description="Its owner can download a job while its files are shown; anyone can "
    "download a published job. Where the blob store gives presigned addresses (an S3 "
    "bucket), the answer is a redirect to one, valid for a short while, that serves the "
    "same file under the same name.",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The job's redacted files, as a .tar.gz of its folder.",
            "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
        },
        307: {
            "description": "The job's files are at the presigned address in `Location`.",
            "headers": {"Location": {"schema": {"type": "string", "format": "uri"}}},
        },
        **error_responses(*DOWNLOAD, "request-invalid"),
    },
)
def download_job(
    job_id: uuid.UUID,
    *,
    account: Annotated[Account | None, Security(optional_account)],
    session: SessionDep,
    settings: SettingsDep,
    blobs: BlobStoreDep,
    clock: ClockDep,
) -> Response:
    row, source = service.open_download(
        session, blobs, account, job_id, policy=policy_of(settings), now=clock()
    )
    if isinstance(source, str):
        # The address works for a short while and for anyone who has it: never cached.
        return RedirectResponse(source, status_code=307, headers={"cache-control": "no-store"})
    return StreamingResponse(
        service.chunks(source),
        media_type=service.ARCHIVE_TYPE,
        headers={"content-disposition": service.download_disposition(row)},
    )
