"""Where the App is installed: `installation` and `installation_repositories` events,
recorded. Which account a repository maps to, for runs its workflows issue, is
`app.auth.trusted`'s question, asked of these rows.

Accounts and repositories are keyed by GitHub's numeric ids: a login or a repository
name can be freed and taken by someone else, an id can't.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.db.models import GitHubInstallation, GitHubInstallationRepository
from app.db.session import Database
from app.github.events import (
    InstallationEvent,
    InstallationPayload,
    InstallationRepositoriesEvent,
    RepositoryBrief,
)
from app.github.routing import Context, Event, EventRouter

router = EventRouter()


@router.register(
    "installation", "created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"
)
async def record_installation(event: Event, context: Context) -> None:
    parsed = InstallationEvent.model_validate(event.payload)
    await run_in_threadpool(store, context.database, apply_installation, parsed, context.clock())


@router.register("installation_repositories", "added", "removed")
async def record_repositories(event: Event, context: Context) -> None:
    parsed = InstallationRepositoriesEvent.model_validate(event.payload)
    await run_in_threadpool(store, context.database, apply_repositories, parsed, context.clock())


def store[E](
    database: Database, apply: Callable[[Session, E, datetime], None], event: E, now: datetime
) -> None:
    with database.session() as session:
        apply(session, event, now)
        session.commit()


def apply_installation(session: Session, event: InstallationEvent, now: datetime) -> None:
    """An `installation` event, applied to the installations table."""
    if event.action == "deleted":
        session.execute(
            delete(GitHubInstallation).where(GitHubInstallation.id == event.installation.id)
        )
        return
    row = upsert(session, event.installation, now)
    if event.action == "created":
        row.installed_by_id = event.sender.id
        row.installed_by_login = event.sender.login
        set_repositories(row, event.repositories)
    elif event.action == "suspend":
        row.suspended_at = now
    elif event.action == "unsuspend":
        row.suspended_at = None


def apply_repositories(
    session: Session, event: InstallationRepositoriesEvent, now: datetime
) -> None:
    """An `installation_repositories` event: repositories added or removed."""
    row = upsert(session, event.installation, now)
    if row.installed_by_id is None:  # an installation made before we listened
        row.installed_by_id = event.sender.id
        row.installed_by_login = event.sender.login
    if event.repository_selection is not None:
        row.repository_selection = event.repository_selection
    removed = {repo.id for repo in event.repositories_removed}
    kept = [repo for repo in row.repositories if repo.repository_id not in removed]
    known = {repo.repository_id for repo in kept}
    row.repositories = kept + [
        GitHubInstallationRepository(repository_id=repo.id, full_name=repo.full_name)
        for repo in event.repositories_added
        if repo.id not in known
    ]


def upsert(
    session: Session, installation: InstallationPayload, now: datetime
) -> GitHubInstallation:
    row = session.get(GitHubInstallation, installation.id)
    if row is None:
        row = GitHubInstallation(id=installation.id, created_at=now, repositories=[])
        session.add(row)
    row.account_id = installation.account.id
    row.account_login = installation.account.login
    row.account_type = installation.account.type
    row.repository_selection = installation.repository_selection
    row.updated_at = now
    return row


def set_repositories(row: GitHubInstallation, repositories: Iterable[RepositoryBrief]) -> None:
    unique = {repo.id: repo for repo in repositories}
    row.repositories = [
        GitHubInstallationRepository(repository_id=repo.id, full_name=repo.full_name)
        for repo in unique.values()
    ]
