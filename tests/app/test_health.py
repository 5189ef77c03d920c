"""`GET /api/health`, and the app's start: state directory, migrations, settings override."""

from __future__ import annotations

import sys

from fastapi.testclient import TestClient

from app.db.session import Database
from app.dependencies import get_database
from app.http.server import SWITCH_INTERVAL_SECONDS
from app.main import create_app
from app.settings import Settings, get_settings
from hbench import __version__

from .conftest import LOCAL


def test_health_answers_ok(client: TestClient) -> None:
    answer = client.get("/api/health")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "version": __version__, "mode": "local"}


def test_health_says_when_the_database_is_unreachable(client: TestClient) -> None:
    unreachable = Database("postgresql+psycopg://postgres@127.0.0.1:1/nothing")
    client.app.dependency_overrides[get_database] = lambda: unreachable
    answer = client.get("/api/health")
    assert answer.status_code == 503
    assert answer.json()["code"] == "service-unavailable"
    unreachable.dispose()


def test_the_first_start_creates_the_state_directory(settings: Settings) -> None:
    local = settings.model_copy(update={"database_url": None})
    assert not local.state_dir.exists()
    with TestClient(create_app(local), **LOCAL) as client:
        assert client.get("/api/health").status_code == 200
    assert local.sqlite_path.is_file()
    assert local.blob_dir.is_dir()
    assert local.state_dir.stat().st_mode & 0o777 == 0o700


def test_the_app_reads_its_settings_through_the_overridable_dependency(
    settings: Settings,
) -> None:
    app = create_app()
    local = settings.model_copy(update={"database_url": None})
    app.dependency_overrides[get_settings] = lambda: local
    with TestClient(app, **LOCAL) as client:
        assert client.get("/api/health").status_code == 200
    assert local.sqlite_path.is_file()


def test_the_settings_an_app_is_given_are_no_override(settings: Settings) -> None:
    # FastAPI builds every dependency of every request anew while any override is set.
    app = create_app(settings)
    assert app.dependency_overrides == {}
    with TestClient(app, **LOCAL) as client:
        assert client.get("/api/health").json()["mode"] == settings.mode


def test_a_started_app_hands_the_interpreter_round_every_millisecond(settings: Settings) -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        with TestClient(create_app(settings), **LOCAL):
            assert sys.getswitchinterval() == SWITCH_INTERVAL_SECONDS
    finally:
        sys.setswitchinterval(before)
