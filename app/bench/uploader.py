"""Who is uploading: an account signed in as for any endpoint, or an issued run's token.

`authorization: Bearer hpg_…` (or the local user's session) uploads for that account. The
`hpg-run-token: hpr_…` header uploads for the account the run was issued to, once, within
the run's lifetime; an API token sent beside it must be that account's. Both are settled
before the body is read, so a refused token costs no transfer.

The dependency opens its own short session rather than the request's: an upload streams
for seconds or minutes, and holding a pooled connection all that time would let a few
dozen uploads starve the pool.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.dependencies import bearer, current_caller
from app.auth.service import authenticate_api_token, refuse_denied
from app.auth.tokens import hash_token, hashes_match, is_run_token
from app.checks.evidence import IssuedSpec
from app.checks.run_token import RUN_TOKEN_HEADER, run_token_problems, unknown_token
from app.clock import ClockDep
from app.db.models import Account, IssuedRun
from app.dependencies import DatabaseDep, SettingsDep
from hbench.errors import HbenchError

run_token_header = APIKeyHeader(
    name=RUN_TOKEN_HEADER,
    auto_error=False,
    scheme_name="Run token",
    description="An issued run's token, `hpr_…`: good for that run's one accepted upload.",
)


@dataclass(frozen=True)
class Uploader:
    """The account the job will belong to, and the issued run it is uploaded as, if any."""

    account_id: uuid.UUID
    login: str
    run_id: uuid.UUID | None = None
    issued: IssuedSpec | None = None


def get_uploader(
    request: Request,
    *,
    database: DatabaseDep,
    settings: SettingsDep,
    clock: ClockDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    run_token: Annotated[str | None, Security(run_token_header)],
) -> Uploader:
    """The uploader, or the refusal that says why the request may not upload."""
    with database.session() as session:
        if run_token is None:
            account = current_caller(request, session, settings, credentials).account
            return Uploader(account.id, account.login)
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
        problems = run_token_problems(run.id, run.status, run.expires_at, clock())
        if problems:
            raise HbenchError.from_problems(problems)
        issued = IssuedSpec(
            run_id=str(run.id),
            spec=dict(run.spec),
            spec_digest=run.spec_digest,
            board=run.board,
            entry=run.entry,
        )
        return Uploader(account.id, account.login, run.id, issued)


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


UploaderDep = Annotated[Uploader, Depends(get_uploader)]
