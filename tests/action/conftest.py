"""Fixtures for the Action's tests: the real service on loopback, a runner job's folders,
and the `docker` stand-in first on PATH."""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from app.auth.service import create_api_token, ensure_account
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.action.runner import ActionRunner
from tests.app.conftest import NO_REGRADES
from tests.hbench.cli.service import serving
from tests.http_stub import StubHandler, stub_server

ROOT = Path(__file__).resolve().parents[2]
SHIM = Path(__file__).with_name("docker_shim.py")
BIN = str(Path(sys.executable).parent)


@dataclass(frozen=True)
class Service:
    """The service under test: its URL, an API token of `octocat`'s, its database."""

    url: str
    api_token: str
    database: Database


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The real service in local mode on its default SQLite database, once per module."""
    settings = Settings(mode="local", state_dir=tmp_path_factory.mktemp("state"), **NO_REGRADES)
    database = Database(settings.effective_database_url)
    try:
        with serving(create_app(settings)) as url:
            with database.session() as session:
                account = ensure_account(session, "octocat")
                _, token = create_api_token(session, account, "action test")
            yield Service(url, token, database)
    finally:
        database.dispose()


@dataclass(frozen=True)
class RunnerJob:
    """One runner job's folders and environment, and where the `docker` calls are logged."""

    workspace: Path
    temp: Path
    env: dict[str, str]
    docker_log: Path

    def runner(self, **extra_env: str) -> ActionRunner:
        return ActionRunner(self.workspace, self.temp, {**self.env, **extra_env})

    def docker_calls(self) -> list[dict[str, Any]]:
        if not self.docker_log.exists():
            return []
        return [json.loads(line) for line in self.docker_log.read_text().splitlines()]


def new_runner_job(folder: Path) -> RunnerJob:
    """A workspace, a RUNNER_TEMP, and a PATH with the `docker` stand-in and this Python."""
    workspace, temp, tools = folder / "workspace", folder / "runner-temp", folder / "tools"
    for path in (workspace, temp, tools):
        path.mkdir(parents=True)
    docker = tools / "docker"
    docker.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SHIM}" "$@"\n')
    docker.chmod(0o755)
    log = folder / "docker-calls.jsonl"
    env = {
        "PATH": os.pathsep.join([str(tools), BIN, "/usr/bin", "/bin"]),
        "HOME": os.environ.get("HOME", "/root"),
        "DOCKER_SHIM_LOG": str(log),
    }
    return RunnerJob(workspace, temp, env, log)


@pytest.fixture
def runner_job(tmp_path: Path) -> RunnerJob:
    return new_runner_job(tmp_path)


@dataclass
class TokenEndpoint:
    """The runner's ID-token endpoint: `url` for ACTIONS_ID_TOKEN_REQUEST_URL, and the
    audiences and authorization headers of the requests it answered."""

    url: str
    request_token: str
    audiences: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)


@contextmanager
def token_endpoint(mint: Callable[[str], str]) -> Iterator[TokenEndpoint]:
    """Answer `GET …?api-version=2.0&audience=A` with `{"value": mint(A)}`, as the runner
    does for a job with `id-token: write`."""
    state = TokenEndpoint(url="", request_token=secrets.token_urlsafe(16))

    class Handler(StubHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            state.audiences += query.get("audience", [])
            state.authorizations.append(self.headers.get("authorization", ""))
            if self.headers.get("authorization") != f"bearer {state.request_token}":
                self.send_response(401)
                self.end_headers()
                return
            self.send_json(200, {"count": 1, "value": mint(query["audience"][0])})

    with stub_server(Handler) as port:
        state.url = f"http://127.0.0.1:{port}/_apis/distributedtask/idtoken?api-version=2.0"
        yield state
