"""Who is uploading: an account signed in as for any endpoint, or an issued run's token.

`authorization: Bearer hpg_…` (or the local user's session) uploads for that account. The
`hpg-run-token: hpr_…` header uploads for the account the run was issued to, once, within
the run's lifetime; an API token sent beside it must be that account's. Both are settled
before the body is read, so a refused token costs no transfer. The one exception is a token
used already: its upload is read, to tell the run's own job sent again
(`bench-published-before`: a job counts once) from any other job (`run-token-used`).

The dependency opens its own short session rather than the request's: an upload streams
for seconds or minutes, and holding a pooled connection all that time would let a few
dozen uploads starve the pool.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.auth.claims import SAME_JOB_CLAIMS, ActionsClaims, differing_claims
from app.auth.dependencies import bearer, current_caller, looks_like_jwt
from app.auth.oidc import get_oidc_verifier
from app.auth.service import authenticate_api_token, refuse_denied
from app.auth.tokens import hash_token, hashes_match, is_run_token
from app.bench.shards import mixed_problem
from app.checks.evidence import IssuedSpec
from app.db.models import Account, IssuedRun
from app.db.summary import SummaryCi
from app.runs.provenance import RESUMED_BY, TRUSTED_WORKFLOW
from app.runs.run_token import RUN_TOKEN_HEADER, run_token_problems, unknown_token
from app.services import Services, ServicesDep
from hbench.errors import HbenchError, Problem

run_token_header = APIKeyHeader(
    name=RUN_TOKEN_HEADER,
    auto_error=False,
    scheme_name="Run token",
    description="An issued run's token, `hpr_…`: good for that run's one accepted upload.",
)


@dataclass(frozen=True)
class CiBinding:
    """An upload bound to the workflow run that issued its run: the upload's own OIDC token
    (its `jti` is consumed with the stored job), and whether the run is *run on CI*."""

    claims: ActionsClaims
    run_on_ci: bool
    """The issuing workflow was a trusted release on a GitHub-hosted runner, and the run
    was not continued from another workflow run."""

    def summary(self) -> SummaryCi:
        """What the stored job keeps of it (`app.regrade.service.run_evidence` reads it)."""
        return SummaryCi(
            bound=True,
            run_on_ci=self.run_on_ci,
            runner_environment=self.claims.runner_environment,
            run_id=self.claims.run_id,
            run_attempt=self.claims.run_attempt,
        )


@dataclass(frozen=True)
class Uploader:
    """The account the job will belong to, and the issued run it is uploaded as, if any."""

    account_id: uuid.UUID
    login: str
    run_id: uuid.UUID | None = None
    issued: IssuedSpec | None = None
    ci: CiBinding | None = None
    spent: Problem | None = None
    """`run-token-used`: the run has its job, so this upload is refused whatever it holds,
    with `bench-published-before` when it is a copy of a job that counted."""


async def upload_identity(
    request: Request,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    run_token: Annotated[str | None, Security(run_token_header)],
) -> Uploader:
    """The uploader; beside a run token, an OIDC bearer binds the upload to the workflow run
    that issued it (verified here, then checked against the run's own claims)."""
    ci_claims = None
    jwt = credentials is not None and looks_like_jwt(credentials.credentials)
    if run_token is not None and credentials is not None and jwt:
        verifier = get_oidc_verifier(request, services.settings)
        ci_claims = await verifier.verify(credentials.credentials, services.clock())
        credentials = None
    return await run_in_threadpool(
        get_uploader, request, services, credentials, run_token, ci_claims
    )


def get_uploader(
    request: Request,
    services: Services,
    credentials: HTTPAuthorizationCredentials | None,
    run_token: str | None,
    ci_claims: ActionsClaims | None = None,
) -> Uploader:
    """The uploader, or the refusal that says why the request may not upload."""
    with services.database.session() as session:
        if run_token is None:
            caller = current_caller(request, session, services.settings, credentials)
            return Uploader(caller.account.id, caller.account.login)
        run = find_run(session, run_token)
        account = session.get_one(Account, run.account_id)
        refuse_denied(account)
        if credentials is not None:
            beside = authenticate_api_token(session, credentials.credentials)
            if beside.account_id != run.account_id:
                raise HbenchError.from_problems(
                    [
                        unknown_token(
                            "belongs to a run issued to another account than the API token's"
                        )
                    ]
                )
        problems = run_token_problems(run.id, run.status, run.expires_at, services.clock())
        spent = problems[0] if [p.code for p in problems] == ["run-token-used"] else None
        if problems and spent is None:
            raise HbenchError.from_problems(problems)
        issued = IssuedSpec(
            run_id=str(run.id),
            spec=dict(run.spec),
            spec_digest=run.spec_digest,
            board=run.board,
            entry=run.entry,
        )
        ci = ci_binding(run.provenance, ci_claims) if ci_claims is not None else None
        mixed = mixed_problem(session, run, ci.summary() if ci is not None else None)
        if mixed is not None and spent is None:
            raise HbenchError.from_problems([mixed])
        return Uploader(account.id, account.login, run.id, issued, ci, spent)


def ci_binding(provenance: dict[str, Any] | None, claims: ActionsClaims) -> CiBinding:
    """The binding of an upload to its run's workflow run, or `oidc-upload-mismatch`."""
    stored = provenance or {}
    issuing = stored.get(RESUMED_BY) or stored.get("oidc")
    if not isinstance(issuing, dict):
        raise HbenchError(
            "oidc-upload-mismatch",
            "the run was not issued by a GitHub Actions workflow, so an upload can't be bound "
            "to one; upload it with the run token alone",
            path="authorization",
        )
    shown = differing_claims(issuing, claims.provenance(), SAME_JOB_CLAIMS)
    if shown:
        raise HbenchError(
            "oidc-upload-mismatch",
            f"the upload's OIDC token is of another job than the one that issued the run "
            f"({shown}): upload from the same job of the same workflow run, as the "
            "reusable workflow does, or with the run token alone",
            path="authorization",
        )
    run_on_ci = bool(stored.get(TRUSTED_WORKFLOW)) and RESUMED_BY not in stored
    return CiBinding(claims, run_on_ci)


def find_run(session: Session, token: str) -> IssuedRun:
    """The issued run a run token belongs to; `run-token-invalid` when there is none."""
    if not is_run_token(token):
        why = (
            "holds an API token (hpg_…); send it as `authorization: Bearer hpg_…`"
            if token.startswith("hpg_")
            else "does not hold a run token (hpr_ and 43 characters)"
        )
        raise HbenchError.from_problems([unknown_token(why)])
    run = session.scalars(
        select(IssuedRun).where(IssuedRun.token_hash == hash_token(token))
    ).one_or_none()
    # The index matched the hash already; comparing again in constant time keeps the check
    # itself free of timing differences, whatever the database does.
    if run is None or not hashes_match(run.token_hash, token):
        raise HbenchError.from_problems(
            [unknown_token("holds a run token this service never issued")]
        )
    return run


UploaderDep = Annotated[Uploader, Depends(upload_identity)]
