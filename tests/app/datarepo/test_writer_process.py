"""`hbench-app data-repo write`, the deployment's writer as a process of its own, in GitHub
mode: it mints the App's installation token from GitHub (the fake, over real HTTP) and
pushes the outbox's changes with it, as the service's own writer does."""

from __future__ import annotations

import secrets
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa
from typer.testing import CliRunner

from app.cli import app as hbench_app
from app.datarepo.outbox import enqueue
from app.datarepo.repo_init import create_data_repository
from app.db.migrate import migrated_database
from app.settings import ENV_PREFIX, Settings
from registry.datarepo import layout
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github

from ..conftest import GITHUB, NO_REGRADES
from .conftest import publish, remote_state
from .git_http_server import serve_git


def test_the_writer_process_pushes_in_github_mode_with_the_apps_installation_token(
    tmp_path: Path, database_url: str
) -> None:
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]
    fake = FakeGitHub(keys[0], keys[1:])
    org = fake.add_user("hbench", type="Organization")
    fake.add_repo(org, "data")
    fake.install(org)
    token = "ghs_" + secrets.token_urlsafe(27)
    fake.next_installation_tokens = [token] * 20
    root = tmp_path / "github"
    create_data_repository(root / "hbench" / "data.git", bare=True)

    with serve_fake_github(fake) as github, serve_git(root, token) as git:
        values: dict[str, object] = {
            **GITHUB, **NO_REGRADES, "github_app_id": fake.app.id,
            "github_private_key": fake.app.private_key_pem,
            "github_api_url": f"{github}/api/v3",
            "data_repository_url": git.url("hbench/data.git"),
            "database_url": database_url, "state_dir": tmp_path / "state",
        }  # fmt: skip
        settings = Settings(**values)  # type: ignore[arg-type]
        database = migrated_database(settings)
        with database.session() as session:
            enqueue(session, publish(7))
            session.commit()
        database.dispose()
        env = {f"{ENV_PREFIX}{name.upper()}": str(value) for name, value in values.items()}
        result = CliRunner().invoke(hbench_app, ["data-repo", "write", "--once"], env=env)

    assert result.exit_code == 0, result.output
    assert "Applied 1 changes in 1 commits" in result.output
    state = remote_state(root / "hbench" / "data.git")
    assert layout.run_file("hbench-demo", "run-0007") in state.files
    assert token not in result.output
    assert {h.get("Authorization") for _, _, h in git.requests} == {git.expected_authorization}
