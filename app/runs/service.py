"""Issued runs in the database: issue one within the board's limits, list them, abandon one.

Functions take the session and the time, and commit what they change, so an answer is
only sent once the run is stored. The policy and the spec are pure (`policy`, `spec`);
this module counts, locks and writes.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue
from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.auth.oidc import ActionsClaims, consume_jti
from app.auth.tokens import hash_token, new_run_token
from app.checks.summarize import redacted
from app.db.models import Account, IssuedRun, IssuedRunStatus, Job
from app.runs import policy, shards, spec
from app.runs.lookup import Target
from app.runs.provenance import RESUMED_BY, provenance_of
from app.runs.schemas import IssueRequest
from app.runs.status import effective_status
from hbench.digest import spec_digest
from hbench.errors import HbenchError
from registry.loader import Registry

JOB_SUFFIX_BYTES = 4  # 8 hex characters


@dataclass(frozen=True)
class IssuedShardRun:
    """A stored shard of a sharded run, its tasks and its token (shown once)."""

    run: IssuedRun
    tasks: list[str]
    spec: dict[str, JsonValue]
    """As issued; the row keeps it with key-like values redacted."""
    token: str


@dataclass(frozen=True)
class Issued:
    """A stored run and what only the issuing answer carries: its token and texts."""

    run: IssuedRun
    token: str | None
    prompt_template: str | None
    environment: list[spec.Variable]
    shards: list[IssuedShardRun] = field(default_factory=list)


def issue_run(
    session: Session,
    account: Account,
    request: IssueRequest,
    *,
    registry: Registry,
    lifetime: timedelta,
    now: datetime,
    claims: ActionsClaims | None = None,
    trusted: bool = False,
) -> Issued:
    """Check the request and the board's limits, then store the run and return its token.

    A run a workflow issues with its OIDC token (`claims`, verified) consumes the token's
    `jti` in the same transaction, and keeps the claims as the run's provenance, with
    whether the workflow is a trusted release on a GitHub-hosted runner (`trusted`)."""
    target = policy.check_request(request, registry, denied=account.is_denied)
    runner = policy.runner_problems(
        target.board, claims.runner_environment if claims is not None else None
    )
    if runner:
        raise HbenchError.from_problems(runner)
    parts = shard_plan(target, request.shards)
    entry = spec.entry_for(account.login, request.declarative)
    name = spec.job_name(target.board.slug, entry, secrets.token_hex(JOB_SUFFIX_BYTES))
    source = spec.dataset_source(target, request.registry)
    plan = spec.plan_run(
        target, request.declarative, request.n_attempts, name, source,
        environment=policy.run_in(request, target),
        n_concurrent_trials=request.n_concurrent_trials,
    )  # fmt: skip
    job_spec = spec.build_spec(plan)
    token = new_run_token()
    provenance = provenance_of(request, claims, trusted=trusted)
    run = new_run(
        account, target, entry, job_spec, token, provenance=provenance, now=now, lifetime=lifetime
    )
    # A sharded run's own token is never shown: only its shards upload.
    run.shard_count = len(parts) if parts is not None else None
    issued_shards = []
    for index, tasks in enumerate(parts or []):
        shard_spec = shards.shard_spec(job_spec, tasks, index, len(parts or []))
        shard_token = new_run_token()
        row = new_run(
            account, target, entry, shard_spec, shard_token,
            provenance=provenance, now=now, lifetime=lifetime,
        )  # fmt: skip
        row.parent_id, row.shard_index, row.shard_count = run.id, index, run.shard_count
        issued_shards.append(IssuedShardRun(row, tasks, shard_spec, shard_token))
    # Everything above is pure: the account's lock (SQLite's one writer) is taken only now,
    # and held just for the counts and the writes.
    lock_account(session, account)
    problems = policy.limit_problems(target.board, board_usage(session, account, target, now), now)
    if problems:
        session.rollback()
        raise HbenchError.from_problems(problems)
    if claims is not None:
        try:
            consume_jti(session, claims, now)
        except HbenchError:
            session.rollback()
            raise
    session.add(run)
    session.add_all(shard.run for shard in issued_shards)
    session.commit()
    # The one answer that carries the spec gives it as issued; the row keeps its copy.
    set_committed_value(run, "spec", job_spec)
    variables = spec.run_environment(plan.model_name, plan.environment_type)
    shown = token if parts is None else None
    return Issued(run, shown, request.declarative.prompt_template, variables, issued_shards)


def new_run(
    account: Account,
    target: Target,
    entry: str,
    job_spec: dict[str, JsonValue],
    token: str,
    *,
    provenance: dict[str, Any] | None,
    now: datetime,
    lifetime: timedelta,
) -> IssuedRun:
    return IssuedRun(
        id=uuid.uuid4(),
        account_id=account.id,
        board=target.board.slug,
        entry=entry,
        # Stored with key-like values (an agent option's API key) redacted, as the job
        # will be; the digest is of the spec as issued, which uploads are matched against
        # (app/checks/spec_match.py).
        spec=redacted(job_spec),
        spec_digest=spec_digest(job_spec),
        token_hash=hash_token(token),
        status=IssuedRunStatus.ISSUED,
        issued_at=now,
        expires_at=now + lifetime,
        provenance=provenance,
    )


def shard_plan(target: Target, count: int) -> list[list[str]] | None:
    """The run's tasks split into `count` shards, checked; None for an unsharded run.
    Refused before anything is stored, so a refusal leaves nothing behind."""
    if count == 1:
        return None
    tasks = policy.run_tasks(target)
    if tasks is None:
        raise HbenchError(
            "run-shards-unbalanced",
            f"the registry does not list the tasks of {target.benchmark.slug} "
            f"({target.task_set.name}), so the run can't be split into shards; leave "
            "`shards` out",
            path="body.shards",
        )
    seconds = target.benchmark.harbor.task_seconds
    parts = shards.split(tasks, count, seconds)
    problems = shards.plan_problems(tasks, parts, seconds)
    if problems:
        raise HbenchError.from_problems(problems)
    return parts


# The two statements each issue runs, built once: SQLAlchemy then neither builds their
# expressions nor derives their cache keys again per request, which took half of each
# one's time (0.3-0.4 ms of CPU apiece, timed per call; bench/issue_throughput.py shows
# the effect on issuing as a whole).
_LOCK_ACCOUNT = (
    update(Account)
    .where(Account.id == bindparam("account_id"))
    .values(is_denied=Account.is_denied)
    .execution_options(synchronize_session=False)
)
_BOARD_RUNS = select(IssuedRun.issued_at, IssuedRun.expires_at, IssuedRun.status).where(
    IssuedRun.account_id == bindparam("account_id"),
    IssuedRun.board == bindparam("board"),
    # A sharded run counts once: its shards are never counted on their own.
    IssuedRun.parent_id.is_(None),
    or_(
        IssuedRun.issued_at > bindparam("since"),
        and_(IssuedRun.status == IssuedRunStatus.ISSUED, IssuedRun.expires_at > bindparam("now")),
    ),
)


def lock_account(session: Session, account: Account) -> None:
    """Serialise issuing for one account, so two requests can't both take the last slot.

    A write to the account's row takes PostgreSQL's row lock and SQLite's write lock until
    the transaction ends; a concurrent issue waits, then counts the run this one stores.
    The update changes nothing (FOR UPDATE would do on PostgreSQL, but SQLite ignores it),
    so no object in the session needs to learn of it.
    """
    session.execute(_LOCK_ACCOUNT, {"account_id": account.id})


def board_usage(session: Session, account: Account, target: Target, now: datetime) -> policy.Usage:
    """The account's runs on the target's board that its limits count, at `now`."""
    since = now - policy.DAY
    # One query for both counts: it runs while the account's lock is held.
    rows = session.execute(
        _BOARD_RUNS,
        {"account_id": account.id, "board": target.board.slug, "since": since, "now": now},
    ).all()
    return policy.Usage(
        issued_last_day=[row.issued_at for row in rows if row.issued_at > since],
        waiting_until=[
            row.expires_at
            for row in rows
            if row.status == IssuedRunStatus.ISSUED and row.expires_at > now
        ],
    )


def list_runs(session: Session, account: Account, limit: int) -> list[IssuedRun]:
    """The account's issued runs, newest first."""
    return list(
        session.scalars(
            select(IssuedRun)
            .where(IssuedRun.account_id == account.id, IssuedRun.parent_id.is_(None))
            .order_by(IssuedRun.issued_at.desc(), IssuedRun.id)
            .limit(limit)
        )
    )


def abandon_run(
    session: Session,
    account: Account,
    run_id: uuid.UUID,
    now: datetime,
    claims: ActionsClaims | None = None,
) -> IssuedRun:
    """Abandon one of the account's waiting runs, freeing its slot at once: for its owner,
    or a job of the repository that issued it (the Action giving up a failed attempt)."""
    run = run_for_reader(session, account, run_id, claims)
    if run.parent_id is not None:
        raise shard_part(run, "abandoned")
    # One conditional update, so an upload landing meanwhile can't be abandoned after it.
    change_waiting(session, run, now, "abandoned", status=IssuedRunStatus.ABANDONED)
    # A sharded run's shards stop with it: none of them can be uploaded afterwards.
    session.execute(
        update(IssuedRun)
        .where(IssuedRun.parent_id == run_id, IssuedRun.status == IssuedRunStatus.ISSUED)
        .values(status=IssuedRunStatus.ABANDONED)
    )
    session.commit()
    session.refresh(run)
    return run


RESUME_CLAIMS = ("repository_id", "job_workflow_ref", "job_workflow_sha")
"""What a workflow run continuing an issued run must share with the one that issued it."""


def resume_run(
    session: Session, account: Account, run_id: uuid.UUID, claims: ActionsClaims, now: datetime
) -> tuple[IssuedRun, str]:
    """Give a workflow run that continues a stopped issued run a new run token (the old one
    stops working); the upload is then bound to this workflow run, and never run on CI."""
    run = session.get(IssuedRun, run_id)
    if run is None or run.account_id != account.id:
        raise HbenchError("run-not-found", f"you have no issued run with id {run_id}")
    if run.shard_count is not None and run.parent_id is None:
        raise shard_part(run, "resumed")
    issuing = (run.provenance or {}).get("oidc")
    if not isinstance(issuing, dict):
        raise HbenchError(
            "oidc-resume-mismatch",
            f"the run {run_id} was not issued by a GitHub Actions workflow; continue it where "
            "it ran (`hbench jobs resume`), and upload it with its run token",
        )
    resuming = claims.provenance()
    differing = [name for name in RESUME_CLAIMS if issuing.get(name) != resuming.get(name)]
    if differing:
        shown = "; ".join(
            f"{name} {resuming.get(name)!r}, issued with {issuing.get(name)!r}"
            for name in differing
        )
        raise HbenchError(
            "oidc-resume-mismatch",
            f"the run {run_id} was issued by another repository or workflow ({shown}); resume "
            "it from the repository and the release of the workflow that issued it",
        )
    token = new_run_token()
    provenance = {**(run.provenance or {}), RESUMED_BY: resuming}
    consume_jti(session, claims, now)
    change_waiting(
        session, run, now, "resumed", token_hash=hash_token(token), provenance=provenance
    )
    session.commit()
    session.refresh(run)
    return run, token


def change_waiting(
    session: Session, run: IssuedRun, now: datetime, doing: str, **values: object
) -> None:
    """Set `values` on the run if it still waits for its upload, in one conditional
    update (an upload landing meanwhile wins); else roll back and refuse, saying why."""
    changed = session.execute(
        update(IssuedRun)
        .where(
            IssuedRun.id == run.id,
            IssuedRun.status == IssuedRunStatus.ISSUED,
            IssuedRun.expires_at > now,
        )
        .values(**values)
        .returning(IssuedRun.id)
    ).scalar_one_or_none()
    if changed is None:
        session.rollback()
        session.refresh(run)
        raise HbenchError("run-not-waiting", not_waiting_message(run, now, doing))


def not_waiting_message(run: IssuedRun, now: datetime, doing: str) -> str:
    status = effective_status(run.status, run.expires_at, now)
    why = {
        IssuedRunStatus.ABANDONED: "was abandoned already",
        IssuedRunStatus.UPLOADED: "has its job uploaded",
        IssuedRunStatus.EXPIRED: f"expired at {run.expires_at:%Y-%m-%d %H:%M} UTC",
    }.get(status, f"is {status.value}")
    return f"the run {run.id} {why}, so it holds no slot and can't be {doing}"


def shard_part(run: IssuedRun, doing: str) -> HbenchError:
    """`run-shard-part`: what is done to a sharded run is done to the whole run (abandoning
    it), what is done to a shard to that shard alone (resuming it, uploading it)."""
    if run.parent_id is not None:
        return HbenchError(
            "run-shard-part",
            f"the run {run.id} is shard {(run.shard_index or 0) + 1} of {run.shard_count} of "
            f"the run {run.parent_id}, and can't be {doing} on its own: act on the run "
            f"{run.parent_id}",
        )
    return HbenchError(
        "run-shard-part",
        f"the run {run.id} is split into {run.shard_count} shards, and is {doing} shard by "
        "shard: give the shard's id (the issuing answer's `shards`)",
    )


def shards_of(session: Session, run: IssuedRun) -> list[IssuedRun]:
    """A sharded run's shards in order; none for any other run."""
    if run.shard_count is None or run.parent_id is not None:
        return []
    return list(
        session.scalars(
            select(IssuedRun).where(IssuedRun.parent_id == run.id).order_by(IssuedRun.shard_index)
        )
    )


SHARD_CLAIMS = (
    "repository_id",
    "run_id",
    "run_attempt",
    "job_workflow_ref",
    "job_workflow_sha",
    "runner_environment",
)
"""What a matrix job claiming a shard must share with the job that issued its run: one
workflow run, so the shard's upload is bound to it as the run's was issued."""


def claim_shard(
    session: Session,
    account: Account,
    shard_id: uuid.UUID,
    claims: ActionsClaims | None,
    now: datetime,
) -> tuple[IssuedRun, str]:
    """Give the job that runs a shard its own run token (the one issued with the run stops
    working): a job of the workflow run that issued the run (by its OIDC token), or the
    run's owner. The shard's upload is then bound as the run was issued."""
    shard = session.get(IssuedRun, shard_id)
    if shard is None or shard.account_id != account.id:
        raise HbenchError("run-not-found", f"you have no issued run with id {shard_id}")
    parent = session.get(IssuedRun, shard.parent_id) if shard.parent_id is not None else None
    if parent is None:
        raise HbenchError(
            "run-shard-part",
            f"the run {shard_id} is not a shard of a sharded run; only a shard's token is "
            "claimed, by the job that runs it",
        )
    if claims is not None:
        refuse_other_workflow_run(parent, claims)
        consume_jti(session, claims, now)
    token = new_run_token()
    change_waiting(session, shard, now, "claimed", token_hash=hash_token(token))
    session.commit()
    session.refresh(shard)
    return shard, token


def refuse_other_workflow_run(parent: IssuedRun, claims: ActionsClaims) -> None:
    """`run-shard-mixed` unless the claiming job is of the workflow run that issued `parent`."""
    issuing = (parent.provenance or {}).get("oidc")
    claiming = claims.provenance()
    if not isinstance(issuing, dict):
        differing: list[str] = ["issuer"]
        shown = "the run was not issued by a GitHub Actions workflow"
    else:
        differing = [name for name in SHARD_CLAIMS if issuing.get(name) != claiming.get(name)]
        shown = "; ".join(
            f"{name} {claiming.get(name)!r}, issued with {issuing.get(name)!r}"
            for name in differing
        )
    if differing:
        raise HbenchError(
            "run-shard-mixed",
            f"the shard's run {parent.id} was issued by another workflow run than this job's "
            f"({shown}): a sharded run's shards run as jobs of the workflow run that issued "
            "it (the reusable workflow's matrix)",
            path="authorization",
        )


def run_for_reader(
    session: Session, account: Account, run_id: uuid.UUID, claims: ActionsClaims | None
) -> IssuedRun:
    """One of the account's runs, for its owner or a job of the repository that issued it."""
    run = session.get(IssuedRun, run_id)
    issuing = ((run.provenance or {}).get("oidc") if run is not None else None) or {}
    foreign = claims is not None and issuing.get("repository_id") != claims.repository_id
    if run is None or run.account_id != account.id or foreign:
        raise HbenchError("run-not-found", f"you have no issued run with id {run_id}")
    return run


def job_of(session: Session, run: IssuedRun) -> Job | None:
    """The run's job: the one uploaded with its token, or a sharded run's merged job."""
    return session.scalars(select(Job).where(Job.issued_run_id == run.id)).first()
