"""Uploading a job in parts: `/api/bench/upload-sessions` (docs/uploads.md).

Open a session with the archive's size, sha256 and part size; `PUT` each part in order with
its sha256 in `hbench-part-sha256`; `GET` the session to see which parts it holds (after a
dropped connection, send from `next_part`); `POST …/complete` to check and store the job
exactly as a single upload is; `DELETE` to abort. Who may use a session is who opened it:
the same account, with the same run token if it was opened with one.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime
from pathlib import Path
from typing import IO, Annotated, Literal, Self

import anyio
from fastapi import APIRouter, Header, Request, Response, status
from fastapi import Path as PathParam
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from app.bench import parts, service, upload_sessions
from app.bench.caps import job_caps
from app.bench.routes import STORE_REFUSALS, accepted, upload_folder
from app.bench.schemas import UploadAccepted
from app.bench.uploader import Uploader, UploaderDep
from app.db.models import UploadSession
from app.errors import error_responses
from app.services import Services, ServicesDep
from hbench.codes import Area
from hbench.errors import HbenchError

PART_DIGEST_HEADER = "hbench-part-sha256"
WRITE_BYTES = 1024 * 1024
"""What a part's receiver gathers before it hands the bytes to a thread to hash and write."""
AUTH = (Area.AUTH, Area.RUN_TOKEN)

router = APIRouter(prefix="/api/bench/upload-sessions", tags=["your bench"])


class SessionRequest(BaseModel):
    """What an upload in parts declares before its first part."""

    total_bytes: int = Field(gt=0, description="The archive's size in bytes, as sent.")
    sha256: str = Field(description="The archive's sha256, 64 lowercase hex digits.")
    part_bytes: int = Field(
        gt=0,
        description="Every part's size but the last's, which holds the rest: at least 1 MiB "
        "and at most what one request may send (95 MiB).",
    )


class SessionState(BaseModel):
    """An upload in parts: what it declared, which parts it holds, and what comes next."""

    id: uuid.UUID
    status: Literal["open", "completing", "completed"]
    total_bytes: int
    part_bytes: int
    sha256: str
    parts: int = Field(description="How many parts the archive is sent in, numbered from 1.")
    received: list[str] = Field(description="The sha256 of each part received, in order.")
    next_part: int | None = Field(description="The part to send next; None once every part is in.")
    expires_at: datetime
    job_id: uuid.UUID | None = Field(description="The stored job, once completed.")

    @classmethod
    def from_row(cls, row: UploadSession) -> Self:
        count = upload_sessions.Declared.of(row).count
        return cls(
            id=row.id,
            status=row.status,
            total_bytes=row.total_bytes,
            part_bytes=row.part_bytes,
            sha256=row.sha256,
            parts=count,
            received=list(row.part_digests[: row.received]),
            next_part=row.received + 1 if row.received < count else None,
            expires_at=row.expires_at,
            job_id=row.job_ref,
        )


SessionId = Annotated[uuid.UUID, PathParam(description="The session's id.")]


@router.post(
    "",
    summary="Start uploading a job in parts",
    description="For a job over the 95 MiB one request may send (up to its board's "
    "`uploadMaxBytes` for an issued run's job). Authenticate as for `POST /api/bench/uploads`: "
    "an API token, or an issued run's `hpg-run-token`. The parts wait in the service for "
    "`HBENCH_UPLOAD_SESSION_LIFETIME` (24 hours) at most. Declaring the archive of a "
    "session you have open (the same `sha256`, `total_bytes` and `part_bytes`, with the same "
    "token or run token) answers that session, 200 instead of 201, with the parts it holds: "
    "a client that stopped goes on from its `next_part`.",
    status_code=status.HTTP_201_CREATED,
    response_model=SessionState,
    responses={
        status.HTTP_200_OK: {
            "model": SessionState,
            "description": "The session of this archive you had open, with the parts it holds",
        },
        **error_responses(
            *AUTH,
            "upload-session-invalid",
            "upload-sessions-too-many",
            "upload-too-large",
            "request-invalid",
        ),
    },
)
def open_session(
    body: SessionRequest, uploader: UploaderDep, response: Response, services: ServicesDep
) -> SessionState:
    settings = services.settings
    declared = upload_sessions.Declared(body.total_bytes, body.sha256, body.part_bytes)
    caps = job_caps(settings, services.registry, uploader)
    upload_sessions.refuse_declared(
        declared, sent_cap=caps.sent, request_max=settings.upload_max_bytes
    )
    now = services.clock()
    with services.database.session() as session:
        same = upload_sessions.open_of(session, uploader, declared, now=now)
        if same is not None:
            response.status_code = status.HTTP_200_OK
            return SessionState.from_row(same)
        row = upload_sessions.open_session(
            session, uploader, declared, now=now,
            lifetime=settings.upload_session_lifetime,
            per_account=settings.upload_sessions_per_account,
        )  # fmt: skip
        return SessionState.from_row(row)


@router.get(
    "/{session_id}",
    summary="Which parts an upload in parts holds",
    response_model=SessionState,
    responses=error_responses(
        *AUTH, "upload-session-not-found", "upload-session-expired", "request-invalid"
    ),
)
def session_state(
    session_id: SessionId, uploader: UploaderDep, services: ServicesDep
) -> SessionState:
    with services.database.session() as session:
        now = services.clock()
        row = upload_sessions.find_session(session, uploader, session_id, now, to_change=False)
        return SessionState.from_row(row)


@router.put(
    "/{session_id}/parts/{number}",
    summary="Send one part of an upload in parts",
    description="The part's bytes as the body (`content-type: application/octet-stream`), "
    f"its sha256 in `{PART_DIGEST_HEADER}`. Parts are taken in order from 1; a part received "
    "already may be sent again with the same bytes. A refused part is not kept.",
    response_model=SessionState,
    responses=error_responses(
        *AUTH, Area.PARTS, "upload-too-large", "request-body-too-slow", "request-invalid"
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def put_part(
    request: Request,
    session_id: SessionId,
    number: Annotated[int, PathParam(ge=1, description="The part's number, from 1.")],
    part_sha256: Annotated[
        str,
        Header(
            alias=PART_DIGEST_HEADER,
            pattern=r"^[0-9a-f]{64}$",
            description="The part's sha256, 64 lowercase hex digits.",
        ),
    ],
    uploader: UploaderDep,
    *,
    services: ServicesDep,
) -> SessionState:
    def placed() -> tuple[UploadSession, parts.PartPlace]:
        with services.database.session() as session:
            row = upload_sessions.find_session(session, uploader, session_id, services.clock())
            return row, parts.place_part(row, number)

    row, place = await run_in_threadpool(placed)
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) != place.expected_bytes:
        raise parts.size_refusal(number, place.expected_bytes, int(length))
    async with upload_folder(services.settings) as scratch:
        path = scratch / "part"
        digest = await receive_part(request, path, number, place.expected_bytes)
        if digest != part_sha256:
            raise parts.digest_refusal(number, part_sha256, digest)
        if place.received_digest is not None:
            if place.received_digest != digest:
                raise parts.resent_refusal(number, place.received_digest, digest)
        else:
            await run_in_threadpool(keep_part, services, row, number, digest, path)
    return await run_in_threadpool(session_state, session_id, uploader, services)


def keep_part(services: Services, row: UploadSession, number: int, digest: str, path: Path) -> None:
    with path.open("rb") as body:
        parts.record_part(services.database, services.blobs, row, number, digest=digest, body=body)


async def receive_part(request: Request, path: Path, number: int, expected: int) -> str:
    """Write the request's body to `path`, hashed as it arrives; refused at the first byte
    past `expected`, or short of it at the end. Returns its sha256."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        sink = PartSink(out)
        pending: list[bytes] = []
        held = 0
        async for chunk in request.stream():
            if sink.received + held + len(chunk) > expected:
                raise parts.size_refusal(number, expected, None)
            pending.append(chunk)
            held += len(chunk)
            if held >= WRITE_BYTES:
                await run_in_threadpool(sink.write, pending)
                pending, held = [], 0
        await run_in_threadpool(sink.write, pending)
    if sink.received != expected:
        raise parts.size_refusal(number, expected, sink.received)
    return sink.hash.hexdigest()


class PartSink:
    """A part's file, written and hashed a few chunks at a time in a worker thread: hashing
    95 MiB would take the event loop's time, and handing each 64 KiB chunk to a thread on
    its own costs more than the work when the cores are busy."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.hash = hashlib.sha256()
        self.received = 0

    def write(self, chunks: list[bytes]) -> None:
        for chunk in chunks:
            self.hash.update(chunk)
            self.out.write(chunk)
            self.received += len(chunk)


@router.post(
    "/{session_id}/complete",
    summary="Check and store the job an upload in parts sent",
    description="Once every part is in: the parts, assembled, must have the declared sha256; "
    "then the archive is unpacked and checked exactly as `POST /api/bench/uploads` does, and "
    "answered alike. A refusal stores nothing and removes the session's parts.",
    status_code=status.HTTP_201_CREATED,
    response_model=UploadAccepted,
    responses=error_responses(*AUTH, Area.PARTS, *STORE_REFUSALS),
)
async def complete_session(
    session_id: SessionId, uploader: UploaderDep, services: ServicesDep
) -> UploadAccepted:
    return accepted(await complete(session_id, uploader, services), services)


async def complete(session_id: uuid.UUID, uploader: Uploader, services: Services) -> service.Stored:
    """Assemble the session's parts, check the whole, and store the job, or refuse and
    remove the parts; a failure of the service's own opens the session again."""
    database, blobs = services.database, services.blobs

    def claimed() -> UploadSession:
        with database.session() as session:
            row = upload_sessions.find_session(session, uploader, session_id, services.clock())
        missing = parts.missing_refusal(row)
        if missing is not None:
            raise missing
        if not upload_sessions.claim_completion(database, session_id):
            raise upload_sessions.busy(session_id)
        return row

    row = await run_in_threadpool(claimed)
    try:
        async with upload_folder(services.settings) as scratch:
            plan = parts.PartsToAssemble.of(row)
            stored = await service.assemble_and_accept_in_worker(
                plan, scratch, uploader, services.clock(), services
            )
    except HbenchError as refused:
        if refused.code == "internal-error":
            await run_in_threadpool(upload_sessions.release_completion, database, session_id)
        else:
            await run_in_threadpool(parts.drop_session, database, blobs, session_id)
        raise
    except BaseException:
        # Shielded: a cancelled request (the server stopping) must still open the session
        # again, or it would stay busy until it expired.
        with anyio.CancelScope(shield=True):
            await run_in_threadpool(upload_sessions.release_completion, database, session_id)
        raise
    await run_in_threadpool(parts.mark_completed, database, blobs, session_id, stored.row.id)
    return stored


@router.delete(
    "/{session_id}",
    summary="Abort an upload in parts",
    description="Its parts are removed; nothing is stored.",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(
        *AUTH,
        "upload-session-not-found",
        "upload-session-expired",
        "upload-session-busy",
        "upload-session-completed",
        "request-invalid",
    ),
)
def abort_session(session_id: SessionId, uploader: UploaderDep, services: ServicesDep) -> Response:
    database, blobs, clock = services.database, services.blobs, services.clock
    with database.session() as session:
        row = upload_sessions.owned(session, uploader, session_id)
        if row.status == upload_sessions.COMPLETED:
            raise upload_sessions.completed(row)
        if row.status == upload_sessions.COMPLETING and row.expires_at > clock():
            raise upload_sessions.busy(session_id)
    parts.drop_session(database, blobs, session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
