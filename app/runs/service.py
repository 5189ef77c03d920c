"""Issuing a run: check it, then store it (and its shards) within the board's limits.

Functions take the session and the time, and commit what they change, so an answer is
only sent once the run is stored. The policy and the spec are pure (`policy`, `spec`);
this module counts, locks and writes. Reading runs is `app.runs.queries`, changing a
waiting one `app.runs.waiting`.
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

from app.auth.claims import ActionsClaims
from app.auth.jti import consume_jti
from app.auth.tokens import hash_token, new_run_token
from app.checks.summarize import redacted
from app.db.models import Account, IssuedRun, IssuedRunStatus
from app.runs import policy, shards, spec
from app.runs.lookup import Target
from app.runs.provenance import provenance_of
from app.runs.schemas import IssueRequest
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
