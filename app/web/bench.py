"""Your bench (`/bench`): upload a job, see your jobs and their checks, publish, withdraw,
delete; and abandon issued runs not uploaded yet.

Every change is a form that asks first: Publish shows "Make it public?" (and asks which
board when the job fits several), Withdraw asks "Withdraw for good?", Delete wants the
job's name typed, Abandon asks "Abandon this run?". A job whose regrade is still running,
or gave other rewards, is offered no Publish: its page says why (`app.web.evidence`).
Uploading needs a script in the page, which packs a dropped folder and sends the archive
to `POST /bench/upload`.
"""

from __future__ import annotations

import math
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Request, Security, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from app.auth.dependencies import Caller, bearer, current_caller
from app.auth.sessions import check_origin
from app.bench import service as bench
from app.bench.retention import policy_of
from app.bench.routes import take_upload
from app.bench.schemas import JobDetail, UploadAccepted
from app.bench.uploader import Uploader, get_uploader
from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.dependencies import BlobStoreDep
from app.errors import envelope
from app.publish import service as publishing
from app.publish.choice import BoardChoiceError
from app.publish.record import download_path
from app.registry import RegistryDep
from app.runs.queries import list_runs
from app.runs.run_token import RUN_TOKEN_HEADER, unknown_token
from app.runs.spec import execution_of
from app.runs.status import effective_status
from app.runs.waiting import abandon_run
from app.services import Services, ServicesDep
from app.web import csrf
from app.web.evidence import evidence_view, regrade_view
from app.web.pages import Page, PageDep, page_status
from hbench.errors import HbenchError

router = APIRouter(include_in_schema=False)

NOTICES = {
    "published": "The job is published: its score is on its board.",
    "withdrawn": "The job's score is withdrawn from its board, for good.",
    "deleted": "The job is deleted from Your bench.",
    "deleted-kept": "The job is deleted from Your bench, with its files; its score stays on "
    "its board.",
    "abandoned": "The run is abandoned; its slot on the board is free again.",
    "uploaded": "The job is uploaded and kept private until you publish it.",
}
LISTED = 100
DAY = 86400.0


def notice(done: str | None) -> str | None:
    return NOTICES.get(done or "")


@router.get("/bench", response_class=HTMLResponse)
def your_bench(page: PageDep, done: str | None = None) -> HTMLResponse:
    account = page.signed_in.account
    rows = bench.list_jobs(page.session, account.id, LISTED)
    counted = bench.counted_before_each(page.session, rows)
    listed = [
        UploadAccepted.from_row(row, seen, policy=policy_of(page.settings), now=page.now)
        for row, seen in zip(rows, counted, strict=True)
    ]
    jobs = [(job, regrade_view(job.regrade), evidence_view(job.evidence)) for job in listed]
    issued = [
        (run, effective_status(run.status, run.expires_at, page.now), execution_of(run.spec))
        for run in list_runs(page.session, account, LISTED)
    ]
    return page.render(
        "bench.html",
        title="Your bench",
        jobs=jobs,
        runs=issued,
        waiting=IssuedRunStatus.ISSUED,
        notice=notice(done),
        upload_max_mib=page.settings.upload_max_bytes // (1024 * 1024),
    )


@router.post("/bench/upload")
async def upload(
    request: Request,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> JSONResponse:
    """The page script's upload: the archive as the body, the form token and the run token
    (when one was pasted) in headers. Refusals come back in the API's envelope, which the
    script shows."""
    try:
        job_id = await receive_upload(request, services, credentials)
    except HbenchError as error:
        problems = error.problems
        return JSONResponse(
            envelope(problems).model_dump(), status_code=page_status(problems[0].code)
        )
    return JSONResponse(
        {"id": str(job_id), "location": f"/bench/jobs/{job_id}?done=uploaded"},
        status_code=status.HTTP_201_CREATED,
    )


async def receive_upload(
    request: Request, services: Services, credentials: HTTPAuthorizationCredentials | None
) -> uuid.UUID:
    """Check who sends the upload, then take it in as `POST /api/bench/uploads` does."""
    run_token = request.headers.get(RUN_TOKEN_HEADER) or None
    uploader = await run_in_threadpool(page_uploader, request, services, credentials, run_token)
    stored = await take_upload(request, uploader, services)
    return stored.row.id


def page_uploader(
    request: Request,
    services: Services,
    credentials: HTTPAuthorizationCredentials | None,
    run_token: str | None,
) -> Uploader:
    """The signed-in person as the uploader, checked against forgery; with a run token, the
    run it belongs to, which must be theirs."""
    settings, database, clock = services.settings, services.database, services.clock
    with database.session() as session:
        caller: Caller = current_caller(request, session, settings, credentials, clock)
        if caller.via != "token":
            check_origin(request, settings)
            csrf.check_csrf_token(request, caller, settings, request.headers.get(csrf.HEADER, ""))
        account_id, login = caller.account.id, caller.account.login
    if run_token is None:
        return Uploader(account_id, login)
    uploader = get_uploader(request, services, None, run_token)
    if uploader.account_id != account_id:
        why = f"belongs to a run issued to another account than {login}"
        raise HbenchError.from_problems([unknown_token(why)])
    return uploader


def job_of(page: Page, job_id: uuid.UUID) -> JobDetail:
    row = bench.get_job(page.session, page.signed_in.account.id, job_id)
    return detail_of(page, row)


def detail_of(page: Page, row: Job) -> JobDetail:
    """The job as the API answers it, with its actions at the page's time."""
    counted = bench.counted_before(page.session, row)
    return JobDetail.from_row(row, counted, policy=policy_of(page.settings), now=page.now)


def job_context(page: Page, job: JobDetail, **values: Any) -> dict[str, Any]:
    run = page.session.get(IssuedRun, job.issued_run_id) if job.issued_run_id else None
    row = page.session.get_one(Job, job.id)
    published = row.published_at is not None
    return {
        "title": job.name,
        "job": job,
        "issued_board": run.board if run is not None else None,
        # What deleting leaves (confirm-delete.html): a score, a run's page, a fingerprint.
        "score_board": publishing.score_board(row),
        "run_board": row.board if published else None,
        "counted": published or row.issued_run_id is not None,
        "purge_days": math.ceil(page.settings.deleted_files_retention.total_seconds() / DAY),
        "download": download_path(job.id),
        "regrade": regrade_view(job.regrade),
        "evidence": evidence_view(job.evidence),
        **values,
    }


@router.get("/bench/jobs/{job_id}", response_class=HTMLResponse)
def job_page(page: PageDep, job_id: uuid.UUID, done: str | None = None) -> HTMLResponse:
    try:
        job = job_of(page, job_id)
    except HbenchError as error:
        return page.refused(error, "refused.html", title="Your bench")
    return page.render("job.html", **job_context(page, job, notice=notice(done)))


@router.get("/bench/jobs/{job_id}/{action}", response_class=HTMLResponse)
def confirm_page(page: PageDep, job_id: uuid.UUID, action: str) -> HTMLResponse:
    """The question asked before a change: publish, withdraw or delete."""
    if action not in ("publish", "withdraw", "delete"):
        return page.refused(no_such_page(page), "refused.html", title="Your bench")
    try:
        row = bench.get_job(page.session, page.signed_in.account.id, job_id)
    except HbenchError as error:
        return page.refused(error, "refused.html", title="Your bench")
    job = detail_of(page, row)
    context = job_context(page, job, choices=job.boards.fits)
    # Asked for what the job's state no longer allows (publishing a job that fits no board,
    # whose regrade holds it back or whose window has passed; withdrawing a private one),
    # the page says why at once, with the code the change would be refused with, rather
    # than after the button is pressed.
    held = getattr(job.actions, action).refusal()
    if held is not None:
        refusal = HbenchError.from_problems([held])
        return page.refused(refusal, f"confirm-{action}.html", **context)
    return page.render(f"confirm-{action}.html", **context)


def no_such_page(page: Page) -> HbenchError:
    return HbenchError("endpoint-not-found", f"there is no page at {page.request.url.path}")


def done(job_id: uuid.UUID | None, what: str) -> RedirectResponse:
    where = f"/bench/jobs/{job_id}" if job_id is not None else "/bench"
    return RedirectResponse(f"{where}?done={what}", status.HTTP_303_SEE_OTHER)


@router.post("/bench/jobs/{job_id}/publish", response_class=HTMLResponse)
async def publish(page: PageDep, job_id: uuid.UUID, registry: RegistryDep) -> Any:
    fields = await page.form()
    account = page.signed_in.account
    board = fields.get("board") or None
    try:
        publishing.publish(
            page.session, account, job_id, board=board, registry=registry,
            policy=policy_of(page.settings), now=page.now,
        )  # fmt: skip
    except BoardChoiceError as choice:
        job = job_of(page, job_id)
        context = job_context(page, job, choices=choice.boards)
        return page.refused(choice, "confirm-publish.html", **context)
    except HbenchError as error:
        return refused_on_job(page, job_id, error, "confirm-publish.html")
    return done(job_id, "published")


@router.post("/bench/jobs/{job_id}/withdraw", response_class=HTMLResponse)
async def withdraw(page: PageDep, job_id: uuid.UUID) -> Any:
    await page.form()
    try:
        publishing.withdraw(page.session, page.signed_in.account, job_id, now=page.now)
    except HbenchError as error:
        return refused_on_job(page, job_id, error, "confirm-withdraw.html")
    return done(job_id, "withdrawn")


@router.post("/bench/jobs/{job_id}/delete", response_class=HTMLResponse)
async def delete(page: PageDep, job_id: uuid.UUID, blobs: BlobStoreDep) -> Any:
    fields = await page.form()
    try:
        row = publishing.delete(
            page.session, page.signed_in.account, job_id, confirm=fields.get("confirm", ""),
            blobs=blobs, policy=policy_of(page.settings), now=page.now,
        )  # fmt: skip
    except HbenchError as error:
        return refused_on_job(page, job_id, error, "confirm-delete.html")
    return done(None, "deleted-kept" if publishing.score_board(row) else "deleted")


def refused_on_job(
    page: Page, job_id: uuid.UUID, error: HbenchError, template: str
) -> HTMLResponse:
    """The question's page again, with the refusal; or the refusal alone for a job that
    is not there."""
    page.session.rollback()
    try:
        job = job_of(page, job_id)
    except HbenchError:
        return page.refused(error, "refused.html", title="Your bench")
    return page.refused(error, template, **job_context(page, job, choices=job.boards.fits))


def run_of(page: Page, run_id: uuid.UUID) -> IssuedRun:
    run = page.session.get(IssuedRun, run_id)
    if run is None or run.account_id != page.signed_in.account.id:
        raise HbenchError("run-not-found", f"you have no issued run with id {run_id}")
    return run


@router.get("/bench/runs/{run_id}/abandon", response_class=HTMLResponse)
def confirm_abandon(page: PageDep, run_id: uuid.UUID) -> HTMLResponse:
    try:
        run = run_of(page, run_id)
    except HbenchError as error:
        return page.refused(error, "refused.html", title="Your bench")
    return page.render("confirm-abandon.html", title="Abandon this run?", run=run)


@router.post("/bench/runs/{run_id}/abandon", response_class=HTMLResponse)
async def abandon(page: PageDep, run_id: uuid.UUID) -> Any:
    await page.form()
    try:
        abandon_run(page.session, page.signed_in.account, run_id, page.now)
    except HbenchError as error:
        page.session.rollback()
        return page.refused(error, "refused.html", title="Your bench")
    return done(None, "abandoned")
