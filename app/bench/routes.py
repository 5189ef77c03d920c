"""Your bench's API: `POST /api/bench/uploads`, `GET /api/bench/jobs`, `GET /api/bench/jobs/{id}`.

An upload (../shared/spec/hbench-upload-a-job.txt) is a `.tar.gz` of one sealed job
folder, streamed into a private scratch folder (never held in memory), checked, and
stored privately. Its refusal lists every failure, each with its rule code.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, FastAPI, Query, Request, status
from starlette.concurrency import run_in_threadpool

from app.auth.dependencies import CurrentAccount
from app.bench import service
from app.bench.caps import job_caps
from app.bench.retention import policy_of
from app.bench.schemas import JobDetail, JobInfo, JobList, UploadAccepted
from app.bench.storage import sweep_scratch
from app.bench.uploader import Uploader, UploaderDep
from app.clock import ClockDep
from app.dependencies import SessionDep, SettingsDep, app_settings
from app.errors import error_responses
from app.services import Services, ServicesDep
from app.settings import Settings
from app.uploads.archive import scratch_folder, spool_async
from hbench.codes import Area
from hbench.errors import HbenchError
from hbench.limits import size_text

GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip"})
DEFAULT_LIST_LIMIT = 100
STORE_REFUSALS = (
    Area.ARCHIVE,
    Area.REDACTION,
    Area.JOB,
    Area.CONSISTENCY,
    Area.MANIFEST,
    Area.CHECK,
    "bench-published-before",
    "request-invalid",
)
"""What an unpacked upload may be refused with, sent whole or in parts (`service.accept`)."""


@asynccontextmanager
async def prepare_upload_dir(app: FastAPI) -> AsyncIterator[None]:
    """Create the uploads' scratch folder, and remove what a killed process left there."""
    settings = app_settings(app)
    settings.upload_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    await run_in_threadpool(sweep_scratch, settings.upload_dir)
    yield


router = APIRouter(prefix="/api/bench", tags=["your bench"], lifespan=prepare_upload_dir)


@router.post(
    "/uploads",
    summary="Upload a sealed job (kept private)",
    description="Send a `.tar.gz` of one job folder as the body, `content-type: "
    "application/gzip`, at most 95 MiB (512 MiB unpacked), with `authorization: Bearer "
    "hpg_…` or, for an issued run, `hpg-run-token: hpr_…`. The service checks the files "
    "against the job's manifest, then runs its rule tables; a refusal lists every failure "
    "of the rules that decide whether a job may be stored. An accepted job has key-like "
    "values replaced with `[REDACTED]` and is stored privately on Your bench until you "
    "publish it; when it fits no board (a prompt without an issued run, tasks from a "
    "folder, an environment no board allows, a copy of a job that counted), `boards.notes` "
    "says why, and publishing it is refused with that code.",
    status_code=status.HTTP_201_CREATED,
    response_model=UploadAccepted,
    responses=error_responses(Area.AUTH, Area.RUN_TOKEN, *STORE_REFUSALS),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def upload_job(
    request: Request, uploader: UploaderDep, services: ServicesDep
) -> UploadAccepted:
    return accepted(await take_upload(request, uploader, services), services)


def accepted(stored: service.Stored, services: Services) -> UploadAccepted:
    """The answer to a stored upload, sent whole or in parts: the one answer of both."""
    return UploadAccepted.from_row(
        stored.row, stored.counted, policy=policy_of(services.settings), now=services.clock()
    )


async def take_upload(request: Request, uploader: Uploader, services: Services) -> service.Stored:
    """Stream the request's body into a scratch folder, then unpack, check and store it in
    an upload worker: the one way in for an upload sent whole, from the API or from the
    pages."""
    settings = services.settings
    refuse_before_reading(request.headers, settings)
    caps = job_caps(settings, services.registry, uploader)
    async with upload_folder(settings) as scratch:
        sent = await spool_async(
            request.stream(), scratch, caps.limits(request_max=settings.upload_max_bytes)
        )
        return await service.unpack_and_accept_in_worker(sent, uploader, services.clock(), services)


@asynccontextmanager
async def upload_folder(settings: Settings) -> AsyncIterator[Path]:
    """A scratch folder for one upload, made and removed in a worker thread: removing the
    100,000 files a job may hold takes seconds, which the event loop must not wait out."""

    def enter() -> tuple[AbstractContextManager[Path], Path]:
        settings.upload_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        manager = scratch_folder(settings.upload_dir)
        return manager, manager.__enter__()

    manager, folder = await run_in_threadpool(enter)
    try:
        yield folder
    finally:
        await run_in_threadpool(manager.__exit__, None, None, None)


def refuse_before_reading(headers: Mapping[str, str], settings: Settings) -> None:
    """Refuse what the headers already show can't be taken, before a byte of the body."""
    kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind not in GZIP_TYPES:
        raise HbenchError(
            "upload-content-type",
            f"the upload's content-type is {kind or 'missing'}; send the job's .tar.gz with "
            "`content-type: application/gzip` (curl: -H 'content-type: application/gzip' "
            "--data-binary @job.tgz)",
        )
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) > settings.upload_max_bytes:
        raise HbenchError(
            "upload-too-large",
            f"the upload is {size_text(int(length))}, over the "
            f"{size_text(settings.upload_max_bytes)} "
            "one request may send; send a job this large in parts (`hbench jobs upload` "
            "does, POST /api/bench/upload-sessions), or run fewer tasks per job",
        )


@router.get(
    "/jobs",
    summary="List your jobs, newest first",
    response_model=JobList,
    responses=error_responses(Area.AUTH, "request-invalid"),
)
def list_jobs(
    account: CurrentAccount,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many jobs.")] = (
        DEFAULT_LIST_LIMIT
    ),
) -> JobList:
    rows = service.list_jobs(session, account.id, limit)
    policy, now = policy_of(settings), clock()
    counted = service.counted_before_each(session, rows)
    return JobList(
        jobs=[
            JobInfo.from_row(row, seen, policy=policy, now=now)
            for row, seen in zip(rows, counted, strict=True)
        ]
    )


@router.get(
    "/jobs/{job_id}",
    summary="One of your jobs: summary, checks, redactions, boards",
    response_model=JobDetail,
    responses=error_responses(Area.AUTH, "bench-job-not-found", "request-invalid"),
)
def get_job(
    job_id: uuid.UUID,
    account: CurrentAccount,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> JobDetail:
    row = service.get_job(session, account.id, job_id)
    counted = service.counted_before(session, row)
    return JobDetail.from_row(row, counted, policy=policy_of(settings), now=clock())
