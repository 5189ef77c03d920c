"""Taking an upload in, and reading jobs back for Your bench.

`accept` is the upload's work once the archive is unpacked: gather the evidence from the
files, run the check tables (`app.checks.store_checks`), and only when every store check passes
redact the files, pack them and store the job (`app.bench.storage`); the board checks'
failures become the notes of a job kept on Your bench that fits no board. It raises
`HbenchError` with every store check's failure otherwise, and stores nothing. It is
CPU-bound work, so the service runs it in an upload worker's process, with the unpacking
before it (`unpack_and_accept_in_worker` for an upload sent whole,
`assemble_and_accept_in_worker` for one sent in parts; `app.bench.pool`), never in the
server's own threads, where it would hold up every other request.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.jti import consume_jti
from app.bench.caps import job_caps
from app.bench.parts import PartsToAssemble, assemble
from app.bench.pool import run_in_worker
from app.bench.shards import complete_run
from app.bench.storage import blob_key, new_job_id, store_job
from app.bench.uploader import Uploader
from app.checks.boards import Boards, boards_for, judged
from app.checks.evidence import Evidence, Identity, IssuedSpec
from app.checks.fingerprints import published_before, published_before_each
from app.checks.signature import SignatureOutcome, SigningPolicy, check_upload_signature
from app.checks.store_checks import Checked, check_job
from app.checks.summarize import fingerprint, job_summary, redacted
from app.db.models import Job, JobStatus
from app.db.session import Database
from app.db.summary import UploadSize
from app.observe import metrics
from app.regrade.plan import RegradeInput, plan_regrade
from app.regrade.service import new_regrade
from app.services import Services, ServicesRecipe
from app.uploads.archive import ExtractedJob, SpooledBody
from app.uploads.redact import redact_folder_by_rule, redact_text
from hbench.errors import HbenchError, Problem
from hbench.jobs.identity import job_identity
from hbench.jobs.locks import task_digests
from hbench.jobs.manifest import MANIFEST_NAME, Manifest, parse_manifest
from hbench.jobs.models import Job as HarborJob
from hbench.jobs.pack import pack
from hbench.jobs.reader import read_job
from hbench.limits import MANIFEST_MAX_BYTES
from registry.loader import Registry
from registry.pins import differing_tasks
from registry.placement import pinned_digests

STORED_GZIP_LEVEL = 1
"""The stored copy's compression. Level 6 (what clients send) packs text about 25% smaller
but takes four times the CPU, which made packing a 95 MiB upload cost as much as checking
it; storage is cheaper than holding an upload's request that long."""

LISTED_STATUSES = (JobStatus.PRIVATE, JobStatus.PUBLISHED, JobStatus.WITHDRAWN)
"""What Your bench lists: a deleted job keeps only its hidden fingerprint."""


@dataclass(frozen=True)
class Stored:
    """An accepted upload: its row, its checks, and, for a copy of a job that counted
    already, why it can't count again (`bench-published-before`)."""

    row: Job
    report: Checked
    counted: Problem | None = None


@dataclass(frozen=True)
class Upload:
    """Where an upload stands once unpacked: its files, who sends it, and when."""

    extracted: ExtractedJob
    uploader: Uploader
    now: datetime


def accept(upload: Upload, services: Services) -> Stored:
    """Check an unpacked upload and store it with its regrade queued (or not, saying why);
    raise with every failure, storing nothing. Past the settings' most values to redact,
    `upload-too-many-secrets`. A bundle beside the manifest is checked
    (`app.checks.signature`), before redaction, and kept when it passes; never refused."""
    settings, database, registry = services.settings, services.database, services.registry
    extracted = upload.extracted
    issued = upload.uploader.issued
    evidence, boards = gather(extracted, settings.min_hbench_version, registry, issued)
    if upload.uploader.spent is not None:
        raise HbenchError.from_problems(
            [spent_refusal(database, evidence.job, upload.uploader.spent)]
        )
    report = check_job(evidence)
    if not report.accepted:
        raise HbenchError.from_problems(as_sent(report.problems, extracted))
    job, manifest = evidence.job, evidence.manifest
    if job is None or manifest is None or boards is None:
        # Unreachable: the rules fail an upload whose job or manifest can't be read.
        raise RuntimeError("an accepted upload has a job and a manifest")
    boards = judged(boards, tuple(as_sent(list(report.board_notes), extracted)))
    with database.session() as session:
        seen = published_before(session, fingerprint(job))
    if seen is not None and issued is not None:
        # A run token's upload counts on its board, and a job counts once.
        raise HbenchError.from_problems([seen])
    ci = upload.uploader.ci
    signature = check_upload_signature(
        extracted.root, extracted.files, manifest.digest, SigningPolicy.of(settings),
        ci.claims if ci is not None else None,
    )  # fmt: skip
    redacted = redact_folder_by_rule(
        extracted.root, extracted.files, max_values=settings.upload_max_redactions
    )
    redactions = redacted.files
    dataset = boards.facts.dataset if boards.facts is not None else None
    pinned = pinned_digests(registry, dataset)
    digests = task_digests(job)
    tasks_pinned = pinned is not None and not differing_tasks(
        pinned[0], digests, sorted({t.task_name for t in job.results if t.task_name})
    )
    row = new_row(
        upload, job, manifest, boards, report=report, redactions=redactions,
        tasks_pinned=tasks_pinned, redaction_rules=redacted.rule_totals(),
        signature=signature,
    )  # fmt: skip
    plan = plan_regrade(
        RegradeInput(
            job=job,
            dataset=dataset,
            enabled=settings.regrade_enabled,
            tasks_root=settings.regrade_tasks_dir,
            pinned=pinned[0] if pinned is not None else None,
            digests=digests,
            redactions=redactions,
        )
    )
    archive = pack_beside(extracted)
    regrade = new_regrade(row.id, plan, upload.now)
    also = partial(consume_jti, claims=ci.claims, now=upload.now) if ci is not None else None
    blobs = services.blobs
    stored = store_job(database, blobs, row, archive, now=upload.now, regrade=regrade, also=also)
    complete_run(database, blobs, stored.issued_run_id, upload.now)  # a sharded run's last
    return Stored(stored, report, counted=seen)


def spent_refusal(database: Database, job: HarborJob | None, spent: Problem) -> Problem:
    """Why a used run token's upload is refused: a copy of a job that counted (the run's
    own, sent again, say) is `bench-published-before`, as the guide promises; any other job
    is `run-token-used`."""
    if job is None:
        return spent
    with database.session() as session:
        return published_before(session, fingerprint(job)) or spent


async def unpack_and_accept_in_worker(
    sent: SpooledBody, uploader: Uploader, now: datetime, services: Services
) -> Stored:
    """Unpack a spooled body and `accept` it, both in one of the upload workers: the
    server's interpreter neither inflates nor parses an upload sent whole."""
    absolute = SpooledBody(sent.body.absolute(), sent.target.absolute(), sent.limits)
    return await _in_worker(services, unpack_and_accept, absolute, uploader, now)


async def _in_worker(services: Services, function: Callable[..., Stored], *args: Any) -> Stored:
    """`function(*args, recipe)` in an upload worker, counted here, in the process whose
    metrics are scraped (`hbench_uploads`: accepted, or refused by code)."""
    started = time.perf_counter()
    try:
        stored = await run_in_worker(
            services.settings.upload_workers, function, *args, services.recipe()
        )
    except HbenchError as refused:
        metrics.upload_finished(started, refused.code)
        raise
    metrics.upload_finished(started, None)
    return stored


def unpack_and_accept(
    sent: SpooledBody, uploader: Uploader, now: datetime, recipe: ServicesRecipe
) -> Stored:
    """In a worker: unpack the body (refused with its archive rule code), then `accept` it."""
    return accept(Upload(sent.unpack(), uploader, now), recipe.services())


async def assemble_and_accept_in_worker(
    plan: PartsToAssemble, scratch: Path, uploader: Uploader, now: datetime, services: Services
) -> Stored:
    """Assemble an upload in parts and `accept` it, both in one of the upload workers."""
    return await _in_worker(services, assemble_and_accept, plan, scratch.absolute(), uploader, now)


def assemble_and_accept(
    plan: PartsToAssemble, scratch: Path, uploader: Uploader, now: datetime, recipe: ServicesRecipe
) -> Stored:
    """In a worker: the parts unpacked into `scratch` (`app.bench.parts.assemble`), under
    the caps of the uploader's boards, then `accept`ed."""
    services = recipe.services()
    limits = job_caps(services.settings, services.registry, uploader).limits()
    extracted = assemble(services.blobs, plan, scratch, limits)
    return accept(Upload(extracted, uploader, now), services)


def gather(
    extracted: ExtractedJob,
    min_hbench_version: str,
    registry: Registry,
    issued: IssuedSpec | None,
) -> tuple[Evidence, Boards | None]:
    """Read what the rules check from the unpacked files, as they arrived."""
    root = extracted.root
    manifest, manifest_problems = read_manifest(extracted)
    try:
        job: HarborJob | None = read_job(root)
        job_problems: tuple[Problem, ...] = ()
    except HbenchError as error:
        job, job_problems = None, error.problems
    boards = boards_for(job, registry, issued) if job is not None else None
    evidence = Evidence(
        observed=extracted.files,
        min_hbench_version=min_hbench_version,
        manifest=manifest,
        manifest_problems=manifest_problems,
        identity=read_identity(root),
        job=job,
        job_problems=job_problems,
        placement=boards.placement if boards is not None else None,
        board_notes=boards.notes if boards is not None else (),
        issued=issued,
    )
    return evidence, boards


def read_manifest(extracted: ExtractedJob) -> tuple[Manifest | None, tuple[Problem, ...]]:
    """The job's manifest, or why there is none; read no further than a manifest may be."""
    if MANIFEST_NAME not in extracted.files:
        problem = Problem(
            "manifest-missing",
            f"the job has no {MANIFEST_NAME}, so nothing shows it is unchanged since it ran. "
            "Run benchmarks with `hbench run --config spec.json`, which seals the job, or "
            "seal a finished one with `hbench jobs resume -p jobs/<job-name>`",
            MANIFEST_NAME,
        )
        return None, (problem,)
    with (extracted.root / MANIFEST_NAME).open("rb") as stream:
        data = stream.read(MANIFEST_MAX_BYTES + 1)
    try:
        return parse_manifest(data), ()
    except HbenchError as error:
        return None, error.problems


def read_identity(root: Path) -> Identity | None:
    """The Harbor version and job id the job's own files give; None when unreadable (the
    job reader then says why)."""
    try:
        harbor_version, job_id = job_identity(root)
    except HbenchError:
        return None
    return Identity(harbor_version=harbor_version, job_id=job_id)


def as_sent(problems: list[Problem], extracted: ExtractedJob) -> list[Problem]:
    """Problems as the sender may see them: paths named as the sender knows them
    (`jobs/<job>/…`), not the scratch folder they were unpacked into, which would both leak
    and mislead; and no key-like value a message quotes, since clients print refusals into
    logs that others read (a public repository's Actions log)."""
    inside = str(extracted.root)
    shown = f"jobs/{extracted.job_name}"
    return [
        Problem(
            p.code,
            redact_text(p.message.replace(inside, shown)).text,
            p.path.replace(inside, shown) if p.path is not None else None,
        )
        for p in problems
    ]


def new_row(
    upload: Upload,
    job: HarborJob,
    manifest: Manifest,
    boards: Boards,
    *,
    report: Checked,
    redactions: dict[str, int],
    tasks_pinned: bool = False,
    redaction_rules: dict[str, int] | None = None,
    signature: SignatureOutcome | None = None,
) -> Job:
    """The job's row, not yet stored: private, with its summary, checks and fingerprint."""
    extracted, uploader = upload.extracted, upload.uploader
    issued = uploader.issued
    size = UploadSize(extracted.compressed_bytes, extracted.unpacked_bytes, len(extracted.files))
    job_id = new_job_id(upload.now)
    ci = uploader.ci.summary() if uploader.ci is not None else None
    summary = job_summary(
        job, manifest, boards, issued, size, tasks_pinned=tasks_pinned,
        redaction_rules=redaction_rules, ci=ci,
        signature=signature.kept if signature is not None else None,
    )  # fmt: skip
    return Job(
        id=job_id,
        owner_id=uploader.account_id,
        job_id=uuid.UUID(job.job_id),
        job_name=job.job_name[:255],
        status=JobStatus.PRIVATE,
        summary=summary.stored(),
        # A check's note may quote the job (a task's name), so it is redacted as the job is.
        checks=[redacted(result.to_json()) for result in report.results]
        + ([redacted(signature.check)] if signature is not None else []),
        redactions=redactions,
        fingerprint=fingerprint(job),
        blob_key=blob_key(job_id),
        issued_run_id=uploader.run_id,
        board=issued.board if issued is not None else None,
        entry=issued.entry if issued is not None else None,
        uploaded_at=upload.now,
    )


def pack_beside(extracted: ExtractedJob) -> Path:
    """Pack the (redacted) job folder into a new file beside it in the scratch folder."""
    descriptor, name = tempfile.mkstemp(
        prefix=".stored-", suffix=".tar.gz", dir=extracted.root.parent
    )
    with os.fdopen(descriptor, "wb") as out:
        pack(extracted.root, out, compresslevel=STORED_GZIP_LEVEL)
    return Path(name)


def list_jobs(session: Session, account_id: uuid.UUID, limit: int) -> list[Job]:
    """The account's jobs on Your bench, newest first."""
    return list(
        session.scalars(
            select(Job)
            .where(Job.owner_id == account_id, Job.status.in_(LISTED_STATUSES))
            .order_by(Job.uploaded_at.desc(), Job.id.desc())
            .limit(limit)
        )
    )


def counted_before(session: Session, row: Job) -> Problem | None:
    """Why a private job can't count: it is a copy of a job that counted already (published,
    or uploaded with its run token), found by its fingerprint. Read each time, so a copy
    uploaded before its original was published is marked once the original counts."""
    return counted_before_each(session, [row])[0]


def counted_before_each(session: Session, rows: Sequence[Job]) -> list[Problem | None]:
    """`counted_before` of each row, in a few queries for all of them."""
    private = [row for row in rows if row.status is JobStatus.PRIVATE]
    found = published_before_each(session, [(row.fingerprint, row.id) for row in private])
    seen = dict(zip((row.id for row in private), found, strict=True))
    return [seen.get(row.id) for row in rows]


def get_job(session: Session, account_id: uuid.UUID, job_id: uuid.UUID) -> Job:
    """One of the account's jobs; another account's is answered as missing."""
    row = session.get(Job, job_id)
    if row is None or row.owner_id != account_id or row.status not in LISTED_STATUSES:
        raise HbenchError(
            "bench-job-not-found",
            f"you have no job with id {job_id} on Your bench; list yours with GET /api/bench/jobs",
        )
    return row
