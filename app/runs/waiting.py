"""Changing a run that waits for its upload: abandon it, resume it from another workflow
run, or claim a shard's own token; each in one conditional update, so an upload landing
meanwhile wins (`change_waiting`)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.orm import Session

from app.auth.claims import SAME_JOB_CLAIMS, ActionsClaims, differing_claims
from app.auth.jti import consume_jti
from app.auth.tokens import hash_token, new_run_token
from app.db.models import Account, IssuedRun, IssuedRunStatus
from app.runs.provenance import RESUMED_BY
from app.runs.queries import run_for_reader
from app.runs.status import effective_status
from hbench.errors import HbenchError


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
    shown = differing_claims(issuing, resuming, RESUME_CLAIMS)
    if shown:
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
        shown = "the run was not issued by a GitHub Actions workflow"
    else:
        shown = differing_claims(issuing, claiming, SAME_JOB_CLAIMS)
    if shown:
        raise HbenchError(
            "run-shard-mixed",
            f"the shard's run {parent.id} was issued by another workflow run than this job's "
            f"({shown}): a sharded run's shards run as jobs of the workflow run that issued "
            "it (the reusable workflow's matrix)",
            path="authorization",
        )
