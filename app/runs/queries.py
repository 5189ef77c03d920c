"""Reading issued runs: an account's runs, one for its owner or a job of the repository
that issued it, a sharded run's shards, and a run's job."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.claims import ActionsClaims
from app.db.models import Account, IssuedRun, Job
from hbench.errors import HbenchError


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


def shards_of(session: Session, run: IssuedRun) -> list[IssuedRun]:
    """A sharded run's shards in order; none for any other run."""
    if run.shard_count is None or run.parent_id is not None:
        return []
    return list(
        session.scalars(
            select(IssuedRun).where(IssuedRun.parent_id == run.id).order_by(IssuedRun.shard_index)
        )
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
