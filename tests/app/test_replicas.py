"""A deployment as docs/deployment.md lays it out, each part its own process: PostgreSQL, an
S3-compatible server (moto's), two replicas of `hbench-app serve` in GitHub mode (the fake
GitHub mints the App's tokens; a git HTTP server holds the data repository) with their own
state directories, following the data repository (`HBENCH_SITE_FOLLOW`), and the writer
`hbench-app data-repo write` alone. A job uploaded through one replica downloads through
the other; a publish through either shows on both replicas' sites within the writer's and
followers' rounds; a replica killed and started again serves the current site at once and
has lost nothing."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from app.auth.service import create_api_token, ensure_account
from app.blobs import S3Config
from app.datarepo.repo_init import create_data_repository
from app.db.migrate import migrated_database
from app.settings import ENV_PREFIX, Settings
from sitebuild import page
from tests.app.datarepo.git_http_server import serve_git
from tests.app.http.serving import HBENCH_APP, Served, serving
from tests.app.v1.conftest import summary
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github
from tests.s3_server import s3_config, s3_server

from .bench.conftest import sealed, sealed_archive
from .conftest import GITHUB, NO_REGRADES, bearer, scratch_database

__all__ = ["s3_config", "s3_server", "sealed", "sealed_archive"]

pytestmark = [pytest.mark.s3, pytest.mark.harbor, pytest.mark.postgres]
ROUND = "1"
"""The writer's and the followers' round, in seconds."""


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[str]:
    with scratch_database("postgresql", tmp_path) as url:
        yield url


def mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def wait_for(what: str, check: Callable[[], bool], seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds:.0f} s"
        time.sleep(0.25)


def shows(served: Served, path: str) -> bool:
    return served.client.get(f"/site/{path}").status_code == 200


@pytest.mark.timeout(600)
def test_two_replicas_and_a_writer_share_one_database_store_and_site(
    tmp_path: Path, postgres: str, s3_config: S3Config, sealed_archive: bytes
) -> None:
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]
    fake = FakeGitHub(keys[0], keys[1:])
    org = fake.add_user("hbench", type="Organization")
    fake.add_repo(org, "data")
    fake.install(org)
    git_token = "ghs_" + secrets.token_urlsafe(27)
    fake.next_installation_tokens = [git_token] * 100
    create_data_repository(tmp_path / "github" / "hbench" / "data.git", bare=True)

    with ExitStack() as stack:
        github = stack.enter_context(serve_fake_github(fake))
        git = stack.enter_context(serve_git(tmp_path / "github", git_token))
        values: dict[str, object] = {
            **GITHUB, **NO_REGRADES, "github_app_id": fake.app.id,
            "github_private_key": fake.app.private_key_pem, "github_api_url": f"{github}/api/v3",
            "data_repository_url": git.url("hbench/data.git"), "database_url": postgres,
            "blob_store": "s3", "s3_endpoint": s3_config.endpoint, "s3_bucket": s3_config.bucket,
            "writer_poll_interval": ROUND, "workers": "1",
        }  # fmt: skip
        env = {f"{ENV_PREFIX}{name.upper()}": str(value) for name, value in values.items()}
        replica = {**env, "HBENCH_WRITER_ENABLED": "false", "HBENCH_SITE_FOLLOW": "true"}
        database = migrated_database(Settings(**values))  # type: ignore[arg-type]
        with database.session() as session:
            _, token = create_api_token(session, ensure_account(session, "alice"), "test")
        database.dispose()

        writer_log = (tmp_path / "writer.log").open("w")
        writer = subprocess.Popen(
            [HBENCH_APP, "data-repo", "write", "--state-dir", str(tmp_path / "writer")],
            env={**os.environ, **env}, stdout=writer_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        stack.callback(writer.wait, 30)
        stack.callback(writer.terminate)
        one = stack.enter_context(serving(mkdir(tmp_path / "one"), **replica))
        two = stack.enter_context(serving(mkdir(tmp_path / "two"), **replica))

        # Uploaded through one, downloaded through the other: the job is in the bucket.
        sent = one.client.post(
            "/api/bench/uploads", content=sealed_archive,
            headers={**bearer(token), "content-type": "application/gzip"},
        )  # fmt: skip
        assert sent.status_code == 201, sent.text
        job_id = sent.json()["id"]
        downloads = [
            r.client.get(f"/api/bench/jobs/{job_id}/download", headers=bearer(token))
            for r in (one, two)
        ]
        assert [d.status_code for d in downloads] == [307, 307]
        stored = [httpx.get(d.headers["location"]).content for d in downloads]
        assert stored[0] == stored[1] and stored[0][:2] == b"\x1f\x8b"  # one gzip, in S3

        # Published through the other, on both replicas' sites within a few rounds.
        published = two.client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(token))
        assert published.status_code == 200, published.text
        run_page = page.run(published.json()["board"], job_id)
        wait_for("the run's page on replica one", lambda: shows(one, run_page))
        wait_for("the run's page on replica two", lambda: shows(two, run_page))

        # Replica one killed; two goes on; one started again serves the current site at once.
        one.process.send_signal(signal.SIGKILL)
        one.process.wait(30)
        pushed = two.client.post("/v1/runs", json=summary(), headers=bearer(token))
        assert pushed.status_code == 201, pushed.text
        pushed_page = page.pushed_run(pushed.json()["data"]["id"])
        wait_for("the pushed run's page on replica two", lambda: shows(two, pushed_page))
        again = stack.enter_context(serving(tmp_path / "one", **replica))
        wait_for("replica one's site after its restart", lambda: shows(again, pushed_page), 30)
        assert shows(again, run_page)
        listed = again.client.get("/api/bench/jobs", headers=bearer(token)).json()
        assert [j["id"] for j in listed["jobs"]] == [job_id]
