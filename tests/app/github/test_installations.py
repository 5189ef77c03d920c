"""Installation events, recorded by the owner's id; and the account a repository maps to."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.trusted import account_for_repository, installation_for_repository
from app.db.models import Account, GitHubInstallation
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeInstallation, FakeRepo, FakeUser
from tests.fakes.github.webhooks import (
    deliver,
    delivery,
    installation_payload,
    installation_repositories_payload,
)


@pytest.fixture
def org(fake: FakeGitHub) -> FakeUser:
    return fake.add_user("octo-org", type="Organization")


@pytest.fixture
def admin(fake: FakeGitHub) -> FakeUser:
    return fake.add_user("octo-admin")


def send(client: TestClient, fake: FakeGitHub, event: str, payload: dict[str, object]) -> None:
    answer = deliver(client, delivery(fake, event, payload))
    assert answer.status_code == 202, answer.text


def installed(db: Session) -> list[GitHubInstallation]:
    db.expire_all()
    return list(db.scalars(select(GitHubInstallation)))


def install(
    client: TestClient, fake: FakeGitHub, org: FakeUser, admin: FakeUser, repos: list[FakeRepo]
) -> FakeInstallation:
    installation = fake.install(org, repos)
    send(client, fake, "installation", installation_payload(fake, installation, admin))
    return installation


def test_an_installation_on_selected_repositories_is_recorded(
    service_client: TestClient, fake: FakeGitHub, org: FakeUser, admin: FakeUser, db: Session
) -> None:
    widgets, gadgets = fake.add_repo(org, "widgets"), fake.add_repo(org, "gadgets")
    installation = install(service_client, fake, org, admin, [widgets])
    [row] = installed(db)
    assert (row.id, row.account_id, row.account_login, row.account_type) == (
        installation.id,
        org.id,
        "octo-org",
        "Organization",
    )
    assert (row.repository_selection, row.installed_by_id, row.installed_by_login) == (
        "selected",
        admin.id,
        "octo-admin",
    )
    assert [(r.repository_id, r.full_name) for r in row.repositories] == [
        (widgets.id, "octo-org/widgets")
    ]
    assert installation_for_repository(db, org.id, widgets.id) is not None
    assert installation_for_repository(db, org.id, gadgets.id) is None


def test_repositories_added_and_removed_are_followed(
    service_client: TestClient, fake: FakeGitHub, org: FakeUser, admin: FakeUser, db: Session
) -> None:
    widgets, gadgets = fake.add_repo(org, "widgets"), fake.add_repo(org, "gadgets")
    installation = install(service_client, fake, org, admin, [widgets])
    payload = installation_repositories_payload(fake, installation, admin, added=[gadgets])
    send(service_client, fake, "installation_repositories", payload)
    assert installation_for_repository(db, org.id, gadgets.id) is not None
    payload = installation_repositories_payload(fake, installation, admin, removed=[widgets])
    send(service_client, fake, "installation_repositories", payload)
    db.expire_all()
    assert installation_for_repository(db, org.id, widgets.id) is None
    [row] = installed(db)
    assert [r.full_name for r in row.repositories] == ["octo-org/gadgets"]


def test_suspended_and_deleted_installations_cover_nothing(
    service_client: TestClient, fake: FakeGitHub, org: FakeUser, admin: FakeUser, db: Session
) -> None:
    widgets = fake.add_repo(org, "widgets")
    installation = fake.install(org)  # every repository
    send(service_client, fake, "installation", installation_payload(fake, installation, admin))
    assert installation_for_repository(db, org.id, widgets.id) is not None

    suspend = installation_payload(fake, installation, admin, action="suspend")
    send(service_client, fake, "installation", suspend)
    db.expire_all()
    assert installation_for_repository(db, org.id, widgets.id) is None
    unsuspend = installation_payload(fake, installation, admin, action="unsuspend")
    send(service_client, fake, "installation", unsuspend)
    db.expire_all()
    assert installation_for_repository(db, org.id, widgets.id) is not None

    deleted = installation_payload(fake, installation, admin, action="deleted")
    send(service_client, fake, "installation", deleted)
    assert installed(db) == []


def test_a_repository_maps_to_the_installer_by_ids_not_names(
    service_client: TestClient, fake: FakeGitHub, org: FakeUser, admin: FakeUser, db: Session
) -> None:
    widgets = fake.add_repo(org, "widgets")
    install(service_client, fake, org, admin, [widgets])
    assert account_for_repository(db, org.id, widgets.id) is None  # not signed in yet
    account = Account(login="octo-admin", github_id=admin.id)
    db.add(account)
    db.commit()
    assert account_for_repository(db, org.id, widgets.id) == account
    # Another owner with the same name later (a freed login taken over) gets nothing.
    assert account_for_repository(db, org.id + 1, widgets.id) is None
