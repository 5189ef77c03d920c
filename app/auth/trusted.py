"""Trusted publishing: a GitHub Actions workflow issues a run with its OIDC token, no API
token needed (`POST /api/local-runs` only).

A bearer that reads as a JWT (three dot-separated parts, not an `hpg_` API token) is
verified (`app.auth.oidc`), then its repository is matched to an account by numeric
ids, never by name: the App must be installed where the repository is (as the
installation webhooks recorded it), and the run belongs to whoever installed it there, or,
when that person has not signed in to hbench, to the account of the repository's owner
(a person's own repositories). The token's `jti` is consumed in the transaction that
stores the run (`app.runs.service.issue_run`), so a token issues one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.auth.claims import ActionsClaims, is_trusted
from app.auth.dependencies import bearer, current_caller, looks_like_jwt
from app.auth.oidc import get_oidc_verifier
from app.auth.service import refuse_denied
from app.clock import ClockDep
from app.db.models import Account, GitHubInstallation
from app.dependencies import SessionDep, SettingsDep
from hbench.errors import HbenchError


@dataclass(frozen=True)
class RunIssuer:
    """Who issues a run: a signed-in account, or a workflow (its verified claims) acting
    for the account its repository maps to."""

    account: Account
    claims: ActionsClaims | None = None
    trusted: bool = False
    """A trusted release of the reusable workflow, on a GitHub-hosted runner."""


async def run_issuer(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    clock: ClockDep,
) -> RunIssuer:
    """The issuer of a run: an OIDC token's workflow, or the caller as anywhere else."""
    if credentials is None or not looks_like_jwt(credentials.credentials):
        caller = await run_in_threadpool(
            current_caller, request, session, settings, credentials, clock
        )
        return RunIssuer(caller.account)
    verifier = get_oidc_verifier(request, settings)
    claims = await verifier.verify(credentials.credentials, clock())
    account = await run_in_threadpool(workflow_account, session, claims)
    return RunIssuer(account, claims, is_trusted(claims, verifier.trusted))


def workflow_account(session: Session, claims: ActionsClaims) -> Account:
    """The account runs of this workflow's repository belong to; refuses a repository the
    App is not installed on, and one whose people have not signed in to hbench."""
    owner_id, repository_id = claims.repository_owner_id, claims.repository_id
    installation = installation_for_repository(session, owner_id, repository_id)
    if installation is None:
        raise HbenchError(
            "oidc-repository-not-installed",
            f"{claims.repository} is not in an installation of the hbench App, so its "
            f"workflows can't issue runs: install the App on {claims.repository_owner} "
            "(for this repository, or all of them), then run the workflow again",
        )
    account = account_for_repository(session, owner_id, repository_id)
    if account is None:
        account = session.scalars(
            select(Account).where(Account.github_id == owner_id)
        ).one_or_none()
    if account is None:
        login = installation.installed_by_login
        who = f"@{login}, who installed it," if login else "whoever installed it"
        raise HbenchError(
            "oidc-account-unknown",
            f"the App is installed on {claims.repository_owner}, but no hbench account "
            f"stands for it: {who} should sign in to hbench with GitHub "
            "(/auth/github/login) once, then run the workflow again",
        )
    refuse_denied(account)
    return account


RunIssuerDep = Annotated[RunIssuer, Depends(run_issuer)]


def installation_for_repository(
    session: Session, owner_id: int, repository_id: int
) -> GitHubInstallation | None:
    """The App's working installation on a repository, by the owner's and the
    repository's ids, or None."""
    rows = session.scalars(
        select(GitHubInstallation).where(
            GitHubInstallation.account_id == owner_id, GitHubInstallation.suspended_at.is_(None)
        )
    )
    for row in rows:
        if row.repository_selection == "all" or any(
            repo.repository_id == repository_id for repo in row.repositories
        ):
            return row
    return None


def account_for_repository(session: Session, owner_id: int, repository_id: int) -> Account | None:
    """The account of whoever installed the App where this repository is, if they
    have signed in to hbench: runs the repository's workflows issue are theirs."""
    installation = installation_for_repository(session, owner_id, repository_id)
    if installation is None or installation.installed_by_id is None:
        return None
    return session.scalars(
        select(Account).where(Account.github_id == installation.installed_by_id)
    ).one_or_none()
