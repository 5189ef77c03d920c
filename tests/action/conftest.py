"""Fixtures for the Action's tests: the real service on loopback, a runner job's folders,
the runner image built for real once per session, and a caller's GitHub: its OIDC issuer
(the fake GitHub's), the runner's token endpoint, and the workflow runs it mints for."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from app.auth.service import create_api_token, ensure_account
from app.db.models import Account
from app.db.session import Database
from app.github.events import InstallationEvent
from app.github.installations import apply_installation
from app.main import create_app
from app.settings import Settings
from tests.action.runner import ActionRunner
from tests.app.conftest import NO_REGRADES
from tests.fakes.github import FakeGitHub
from tests.fakes.github.server import serve_fake_github
from tests.fakes.github.webhooks import installation_payload
from tests.hbench.cli.service import loopback_socket, serving, serving_on, url_of
from tests.http_stub import StubHandler, stub_server
from tools import dockerhost, images

ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)
IMAGE = "hbench-runner:test"
"""The runner image the tests build from actions/run/Dockerfile on the local base."""
WORKFLOW = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/tags/v0.3.0"
WORKFLOW_SHA = "3c9f1e0d2b4a69788f5e4d3c2b1a0f9e8d7c6b5a"
"""The release of the reusable workflow the service trusts, and the commit it was made at."""


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
    """One runner job's folders and environment."""

    workspace: Path
    temp: Path
    env: dict[str, str]

    def runner(
        self,
        *,
        cancel_when: Callable[[], bool] | None = None,
        runner_environment: str = "github-hosted",
        **extra_env: str,
    ) -> ActionRunner:
        return ActionRunner(
            self.workspace,
            self.temp,
            {**self.env, **extra_env},
            cancel_when=cancel_when,
            runner_environment=runner_environment,
        )


def new_runner_job(folder: Path, workspace: Path | None = None) -> RunnerJob:
    """A workspace (`folder/workspace`, or the one given), a fresh RUNNER_TEMP, and a PATH
    with this Python's tools and the system's, where `docker` is."""
    workspace = workspace or folder / "workspace"
    temp = folder / "runner-temp"
    for path in (workspace, temp):
        path.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.pathsep.join([BIN, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": os.environ.get("HOME", "/root"),
    }
    return RunnerJob(workspace, temp, env)


@pytest.fixture
def runner_job(tmp_path: Path) -> RunnerJob:
    return new_runner_job(tmp_path)


@pytest.fixture(scope="session")
def runner_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The runner image built from actions/run/Dockerfile on the local Python base, as
    `make runner-image` builds it, once per session (or reused while its inputs are the
    same); yields the docker CLI while Docker is leased."""
    try:
        lease = dockerhost.acquire((images.TASK_BASE, images.PYTHON_BASE))
    except dockerhost.DockerUnavailableError as error:
        pytest.skip(f"Docker can't run here: {error}")
    try:
        log = tmp_path_factory.mktemp("runner-image") / "build.log"
        images.build_runner_image(lease.docker, IMAGE, log=log)
        yield lease.docker
    finally:
        lease.release()


@pytest.fixture(scope="module")
def release_image(runner_image: str) -> Iterator[str]:
    """This version's runner image (`make runner-image`'s tag), which the run step finds
    when the Action's `image` input is left empty."""
    images.build_runner_image(runner_image, images.runner_tag())
    yield images.runner_tag()


@dataclass
class TokenEndpoint:
    """The runner's ID-token endpoint: `url` for ACTIONS_ID_TOKEN_REQUEST_URL, and the
    audiences and authorization headers of the requests it answered."""

    url: str
    request_token: str
    audiences: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)
    minted: list[str] = field(default_factory=list)

    def environ(self) -> dict[str, str]:
        """The variables a job with `permissions: id-token: write` gets."""
        return {
            "ACTIONS_ID_TOKEN_REQUEST_URL": self.url,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.request_token,
        }


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
            token = mint(query["audience"][0])
            state.minted.append(token)
            self.send_json(200, {"count": 1, "value": token})

    with stub_server(Handler) as port:
        state.url = f"http://127.0.0.1:{port}/_apis/distributedtask/idtoken?api-version=2.0"
        yield state


@dataclass
class CallerGitHub:
    """A caller's repository on the fake GitHub, with the App installed and its owner
    signed in to hbench; the service that trusts the release `WORKFLOW`; and the runner's
    token endpoint, minting tokens for the workflow run `claims` describes.

    The workspace is one path for every workflow run, as on GitHub's runners
    (`/home/runner/work/REPO/REPO`); each job gets a RUNNER_TEMP of its own.
    """

    fake: FakeGitHub
    workspace: Path
    folder: Path
    service: Service
    tokens: TokenEndpoint
    claims: dict[str, Any]
    settings: Settings | None = None
    """The service's settings (its state directory, its blob store)."""

    def workflow_run(self, run_id: int, *, attempt: int = 1, **claims: Any) -> None:
        """Mint from now on as the job of another workflow run (and other claims)."""
        self.claims.update(run_id=str(run_id), run_attempt=str(attempt), **claims)

    def runner_job(self, name: str, *, own_runner: bool = False) -> RunnerJob:
        """A new job on the runner: the shared workspace without earlier runs' folders,
        its own RUNNER_TEMP, and the token endpoint's variables. With `own_runner`, a job
        on a runner of its own, as each of a matrix's jobs is: its own workspace too."""
        if own_runner:
            job = new_runner_job(self.folder / name, self.folder / name / self.workspace.name)
        else:
            shutil.rmtree(self.workspace / "hbench-runs", ignore_errors=True)
            job = new_runner_job(self.folder / name, self.workspace)
        return replace(job, env={**job.env, **self.tokens.environ()})

    def mint(self, audience: str, **changes: Any) -> str:
        return self.fake.oidc.mint(audience, **{**self.claims, **changes})


@pytest.fixture(scope="module")
def caller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CallerGitHub]:
    with caller_github(tmp_path_factory.mktemp("caller")) as github:
        yield github


@contextmanager
def caller_github(folder: Path, workflow_sha: str = WORKFLOW_SHA) -> Iterator[CallerGitHub]:
    """The caller's GitHub and the service that trusts the release, made at `workflow_sha`,
    in `folder` (the `caller` fixture's; bench/shards.py runs the reusable workflow against
    it too, and tests/action/act.py with the commit of its copy of this repository)."""
    workspace = folder / "work" / "octo-repo"
    workspace.mkdir(parents=True)
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]
    fake = FakeGitHub(keys[0], keys[1:], url="http://127.0.0.1:9")
    alice = fake.add_user("alice")
    org = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(org, "octo-repo")
    installation = fake.install(org, [repo])
    claims: dict[str, Any] = {
        "repository": repo.full_name,
        "repository_id": str(repo.id),
        "repository_owner": org.login,
        "repository_owner_id": str(org.id),
        "sub": f"repo:{repo.full_name}:ref:refs/heads/main",
        "workflow_ref": f"{repo.full_name}/.github/workflows/bench.yml@refs/heads/main",
        "job_workflow_ref": WORKFLOW,
        "job_workflow_sha": workflow_sha,
        "runner_environment": "github-hosted",
    }
    sock = loopback_socket()
    with serve_fake_github(fake) as issuer_url:
        settings = Settings(
            mode="local",
            state_dir=folder / "service-state",
            public_url=url_of(sock),
            oidc_issuer=issuer_url,
            trusted_workflows=(f"{WORKFLOW}={workflow_sha}",),
            **NO_REGRADES,
        )
        app = create_app(settings)
        database = Database(settings.effective_database_url)
        try:
            with serving_on(app, sock) as url:
                with database.session() as db:
                    event = InstallationEvent.model_validate(
                        installation_payload(fake, installation, alice)
                    )
                    apply_installation(db, event, datetime.now(UTC))
                    db.add(Account(login="alice", github_id=alice.id))
                    db.commit()
                    _, api_token = create_api_token(db, ensure_account(db, "alice"), "action test")
                service = Service(url, api_token, database)
                with token_endpoint(lambda audience: fake.oidc.mint(audience, **claims)) as tokens:
                    yield CallerGitHub(fake, workspace, folder, service, tokens, claims, settings)
        finally:
            database.dispose()


def chown_tree(folder: Path, uid: int) -> None:
    """Give a folder and everything in it to `uid`, as a runner of that user writes it."""
    for path in (folder, *folder.rglob("*")):
        os.chown(path, uid, uid, follow_symlinks=False)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
