"""Fixtures for the GitHub App's tests: the fake GitHub, the githubkit client wired into
it through `httpx.ASGITransport`, and the service in GitHub mode talking to it.

RSA keys take a moment to make, so a few are made once per session and shared: one for
the App, the rest for the fake OIDC issuer (which rotates through them).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.github.client import GitHubKitClient
from app.github.port import get_github
from app.main import create_app
from app.settings import Settings
from tests.fakes.github import FakeGitHub, create_fake_github

from ..conftest import LOCAL, github_settings

FAKE_URL = "http://127.0.0.1:9"  # never dialled: the transport hands requests to the fake
SERVICE_URL = "http://127.0.0.1:8000"  # LOCAL's base URL: the service's public URL here


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def rsa_keys() -> list[RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(5)]


@pytest.fixture
def fake(rsa_keys: list[RSAPrivateKey]) -> FakeGitHub:
    """An empty fake GitHub: the App exists, nobody and nothing else yet."""
    return FakeGitHub(rsa_keys[0], rsa_keys[1:], url=FAKE_URL)


@pytest.fixture
def fake_app(fake: FakeGitHub) -> FastAPI:
    return create_fake_github(fake)


@pytest.fixture
def transport(fake_app: FastAPI) -> httpx.ASGITransport:
    return httpx.ASGITransport(app=fake_app)


@pytest.fixture
def github_client(fake: FakeGitHub, transport: httpx.ASGITransport) -> GitHubKitClient:
    """The service's real GitHub client, as the App, talking to the fake."""
    return GitHubKitClient(
        base_url=f"{fake.url}/api/v3",
        app_id=fake.app.id,
        private_key=fake.app.private_key_pem,
        client_id=fake.app.client_id,
        client_secret=fake.app.client_secret,
        transport=transport,
        auto_retry=False,
    )


@pytest.fixture
def github_mode(settings: Settings, fake: FakeGitHub) -> Settings:
    """The tests' state and database, in GitHub mode as the fake's App (the background
    data-repo writer off)."""
    return github_settings(
        settings,
        github_app_id=fake.app.id,
        github_private_key=fake.app.private_key_pem,
        github_webhook_secret=fake.app.webhook_secret,
        github_client_id=fake.app.client_id,
        github_client_secret=fake.app.client_secret,
        github_api_url=f"{fake.url}/api/v3",
        oidc_issuer=fake.url,
        public_url=SERVICE_URL,
        # Tests that publish run the data-repo writer themselves, when they choose.
        writer_enabled=False,
    )


@pytest.fixture
def service(github_mode: Settings, github_client: GitHubKitClient) -> FastAPI:
    app = create_app(github_mode)
    app.dependency_overrides[get_github] = lambda: github_client
    return app


@pytest.fixture
def service_client(service: FastAPI) -> Iterator[TestClient]:
    """The started service, in GitHub mode, reached at its public URL."""
    with TestClient(service, **LOCAL) as client:
        yield client
