"""The service in GitHub mode starts its data-repo writer with the App's installation
tokens: minted by the fake GitHub for the data repository alone, and taken by a git
server over HTTP, as github.com takes them."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from fastapi.testclient import TestClient

from app.datarepo.outbox import enqueue
from app.datarepo.repo_init import create_data_repository
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from registry.datarepo import layout
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github

from ..conftest import LOCAL
from ..datarepo.conftest import publish, remote_state
from ..datarepo.git_http_server import serve_git

PUSH_TIMEOUT_SECONDS = 30.0


def test_the_writer_pushes_with_an_installation_token_of_the_data_repository(
    github_mode: Settings, fake: FakeGitHub, tmp_path: Path
) -> None:
    org = fake.add_user("hbench-org", type="Organization")
    data = fake.add_repo(org, "data")
    fake.add_repo(org, "website")
    fake.install(org)
    token = "ghs_" + secrets.token_urlsafe(27)
    fake.next_installation_tokens.append(token)
    root = tmp_path / "github"
    create_data_repository(root / "hbench-org" / "data.git", bare=True)
    with serve_fake_github(fake) as url, serve_git(root, token) as git_server:
        settings = github_mode.model_copy(
            update={
                "github_api_url": f"{url}/api/v3",
                "data_repository": data.full_name,
                "data_repository_url": git_server.url("hbench-org/data.git"),
                "writer_enabled": True,
                "writer_poll_interval": github_mode.writer_poll_interval / 50,
            }
        )
        with TestClient(create_app(settings), **LOCAL):
            database = Database(settings.effective_database_url)
            try:
                with database.session() as session:
                    enqueue(session, publish(1))
                    session.commit()
                pushed = wait_for_run(root / "hbench-org" / "data.git", "run-0001")
            finally:
                database.dispose()
    assert pushed
    # The token was asked for as the App, for the data repository alone, to write contents.
    [grant] = fake.tokens.values()
    assert grant.repository_names == ("data",) and grant.permissions == {"contents": "write"}
    minted = [s for s in fake.seen if s.path.endswith("/access_tokens")]
    assert minted and all(s.auth == "jwt" and s.status == 201 for s in minted)
    # And git carried it to the server, on every request.
    assert {h.get("Authorization") for _, _, h in git_server.requests} == {
        git_server.expected_authorization
    }


def wait_for_run(remote: Path, run_id: str) -> bool:
    """Whether the run's file reached the remote's `main` within the timeout."""
    deadline = time.monotonic() + PUSH_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if layout.run_file("hbench-demo", run_id) in remote_state(remote).files:
            return True
        time.sleep(0.1)
    return False
