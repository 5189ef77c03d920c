"""Fixtures for the service's tests: every database test runs on SQLite, and those marked
`postgres` on PostgreSQL too (tests/conftest.py chooses the backends).

Each backend's database is created and migrated once per session (PostgreSQL's under a
random name on 127.0.0.1:5432, dropped at the end); each test starts from empty tables.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session
from starlette.datastructures import State

from app.auth.service import create_api_token, ensure_account
from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import Database, make_engine
from app.main import AppShape, create_app
from app.settings import ENV_PREFIX, Settings

POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
# A client on the loopback, talking to the loopback: the local user's session.
LOCAL = {"base_url": "http://127.0.0.1:8000", "client": ("127.0.0.1", 50000)}
# A client from elsewhere, as the service sees one behind no proxy.
REMOTE = {"base_url": "http://hbench.example", "client": ("203.0.113.7", 50000)}


@contextmanager
def scratch_database(backend: str, folder: Path) -> Iterator[str]:
    """A new, empty database of a backend; yields its URL and removes it afterwards."""
    if backend == "sqlite":
        yield f"sqlite+pysqlite:///{folder / 'hbench.sqlite3'}"
        return
    name = f"hbench_test_{secrets.token_hex(6)}"
    admin = create_engine(f"{POSTGRES_SERVER}/postgres", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield f"{POSTGRES_SERVER}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(autouse=True)
def no_service_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tests' settings come from the tests, never from the shell that runs them; and a
    default state directory (`./.state`) lands in the test's folder, not the repository."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def migrated_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with scratch_database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture
def database_url(migrated_database_url: str) -> str:
    """The URL of a migrated database whose tables are all empty."""
    engine = make_engine(migrated_database_url)
    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
    engine.dispose()
    return migrated_database_url


@pytest.fixture
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database never migrated, for the migrations' own tests."""
    with scratch_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def db(database_url: str) -> Iterator[Session]:
    """A session on the test's database, separate from the app's own."""
    database = Database(database_url)
    with database.session() as session:
        yield session
    database.dispose()


NO_REGRADES = {"regrade_enabled": False}
"""Most tests' services regrade nothing, as a service so configured: a regrade runs Harbor,
which the tests of regrading (tests/app/regrade/) do for real."""


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Local mode, with the data-repo writer off: most tests look at the database and the
    answers; those of the data repository and the site run a writer themselves."""
    return Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip


_apps: dict[AppShape, FastAPI] = {}


@pytest.fixture
def app(settings: Settings) -> Iterator[FastAPI]:
    """The service's app on the test's settings, not yet started. One app of each shape
    is built per test process, and each test gets it with a state of its own and no
    overrides: building one costs FastAPI some 40 ms of its first requests (each route's
    parameters and answer models, for every app that includes it)."""
    shape = AppShape.of(settings)
    app = _apps.get(shape)
    if app is None:
        app = _apps[shape] = create_app(settings)
    app.state = State()
    app.state.settings = settings
    app.dependency_overrides.clear()
    routes = list(app.router.routes)
    yield app
    assert app.router.routes == routes, "a test changed the shared app: make one (create_app)"


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    """The started app, called from this machine (so signed in as the local user)."""
    with TestClient(app, **LOCAL) as client:
        yield client


@pytest.fixture
def remote(client: TestClient) -> TestClient:
    """The same started app, called from another machine (signed in by nothing)."""
    return TestClient(client.app, **REMOTE)


TokenFactory = Callable[..., str]


@pytest.fixture
def make_token(db: Session) -> TokenFactory:
    """Make an API token for a login (the account is created if new); returns its text."""

    def make(login: str = "alice", name: str = "test") -> str:
        account = ensure_account(db, login)
        _, token = create_api_token(db, account, name)
        return token

    return make


GITHUB = {
    "mode": "github",
    "github_app_id": 1,
    "github_private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "github_webhook_secret": "a-webhook-secret-of-some-length",
    "github_client_id": "Iv1.0123456789abcdef",
    "github_client_secret": "an-oauth-client-secret-value",
    "data_repository": "hbench/data",
    "public_url": "https://hbench.example",
    "session_secret": "a-session-secret-of-some-length",
}


def github_settings(settings: Settings, **changes: object) -> Settings:
    """The same state and database, in GitHub mode with complete (fake) App settings."""
    values = {
        **GITHUB,
        **NO_REGRADES,
        "state_dir": settings.state_dir,
        "database_url": settings.database_url,
    }
    return Settings(**{**values, **changes})


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}
