"""The data-repo writer's installation tokens, minted by the App from the fake GitHub served
on a loopback port (githubkit's synchronous client takes no ASGI transport)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from app.datarepo.git import TokenProvider
from app.github.models import Repo
from app.github.tokens import InstallationTokens
from app.settings import Settings
from hbench.errors import HbenchError
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github


@pytest.fixture
def served(fake: FakeGitHub) -> Iterator[str]:
    with serve_fake_github(fake) as url:
        yield url


def tokens_for(fake: FakeGitHub, url: str, repository: str) -> InstallationTokens:
    return InstallationTokens(
        base_url=f"{url}/api/v3",
        app_id=fake.app.id,
        private_key=fake.app.private_key_pem,
        repository=Repo.parse(repository),
    )


def test_a_token_is_scoped_to_the_data_repository_and_reused(fake: FakeGitHub, served: str) -> None:
    org = fake.add_user("hbench", type="Organization")
    fake.add_repo(org, "data")
    fake.add_repo(org, "other")
    installation = fake.install(org)
    tokens: TokenProvider = tokens_for(fake, served, "hbench/data")

    token = tokens.installation_token()
    assert token.startswith("ghs_")
    grant = fake.tokens[token]
    assert grant.installation_id == installation.id
    assert grant.repository_names == ("data",)
    assert grant.permissions == {"contents": "write"}
    assert tokens.installation_token() == token  # reused while fresh
    assert len(fake.tokens) == 1


def test_a_token_near_its_expiry_is_replaced(fake: FakeGitHub, served: str) -> None:
    org = fake.add_user("hbench", type="Organization")
    fake.add_repo(org, "data")
    fake.install(org)
    tokens = tokens_for(fake, served, "hbench/data")
    first = tokens.installation_token()
    later = datetime.now(UTC) + timedelta(minutes=56)
    assert tokens.installation_token(now=later) != first
    assert len(fake.tokens) == 2


def test_without_the_app_installed_there_is_no_token(fake: FakeGitHub, served: str) -> None:
    fake.add_repo(fake.add_user("hbench", type="Organization"), "data")
    with pytest.raises(HbenchError) as refused:
        tokens_for(fake, served, "hbench/data").installation_token()
    assert refused.value.code == "datarepo-token-unavailable"
    assert "hbench/data" in refused.value.detail


def test_only_github_mode_has_a_token_provider(settings: Settings, github_mode: Settings) -> None:
    assert InstallationTokens.from_settings(settings) is None
    provider = InstallationTokens.from_settings(github_mode)
    assert provider is not None and provider.repository == Repo("hbench", "data")
