"""The whole path through the real programs: `hbench run` seals a demo job, `hbench-app serve`
runs the service in its own process, and `hbench jobs upload` sends the job to it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from app.db.models import IssuedRunStatus, utcnow
from app.db.session import Database
from app.health import wait_until_healthy
from hbench.demo import demo_spec
from tests.hbench.cli.helpers import hbench, write_spec

from .conftest import issue_run, run_status
from .jobs import edit_json, packed, reseal

pytestmark = pytest.mark.harbor

HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
STARTUP_SECONDS = 60.0


@dataclass(frozen=True)
class RunJob:
    path: Path
    spec: dict[str, object]


@pytest.fixture(scope="module")
def run_job(demo_registry: Path, tmp_path_factory: pytest.TempPathFactory) -> RunJob:
    """A demo job run and sealed by the real `hbench run --config spec.json`."""
    folder = tmp_path_factory.mktemp("e2e-run")
    spec = demo_spec(demo_registry, "e2e-demo")
    ran = hbench("run", "--config", str(write_spec(folder, spec)), cwd=folder)
    assert ran.returncode == 0, ran.stderr
    return RunJob(folder / "jobs" / "e2e-demo", spec)


@dataclass(frozen=True)
class Service:
    url: str
    env: dict[str, str]
    state_dir: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    """`hbench-app serve` in its own process, on this test's database (both backends)."""
    state = tmp_path / "state"
    env = {**os.environ, "HBENCH_DATABASE_URL": database_url, "HARBOR_TELEMETRY": "0"}
    port = free_port()
    process = subprocess.Popen(
        [HBENCH_APP, "serve", "--port", str(port), "--state-dir", str(state)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        yield Service(url, env, state)
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    state = wait_until_healthy(url, process, STARTUP_SECONDS)
    if state == "exited":
        stderr = process.stderr.read().decode() if process.stderr else ""
        pytest.fail(f"hbench-app serve exited with {process.returncode}:\n{stderr}")
    if state == "late":
        pytest.fail("hbench-app serve did not start")


def api_token(service: Service, login: str) -> str:
    made = subprocess.run(
        [HBENCH_APP, "tokens", "create", "--login", login, "--state-dir", str(service.state_dir)],
        env=service.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def send(
    service: Service, job: Path, *args: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`hbench jobs upload` of a job to the service, as a user runs it."""
    env = {"HPG_API_TOKEN": token} if token else {}
    url = f"{service.url}/api/bench/uploads"
    return hbench("jobs", "upload", str(job), "--url", url, *args, cwd=job.parent, env=env)


def test_the_real_client_uploads_to_the_real_service(
    service: Service, run_job: RunJob, database_url: str, tmp_path: Path
) -> None:
    token = api_token(service, "alice")
    mine = {"authorization": f"Bearer {token}"}

    # A sealed job, with an API token: accepted, kept privately, listed on Your bench.
    sent = send(service, run_job.path, "--token-env", "HPG_API_TOKEN", token=token)

    assert sent.returncode == 0, sent.stderr
    answer = json.loads(sent.stdout)
    assert answer["status"] == "private"
    assert answer["name"] == "e2e-demo"
    assert answer["score"] == 0.8
    assert answer["boards"]["fits"] == ["hbench-demo"]
    listed = httpx.get(f"{service.url}/api/bench/jobs", headers=mine).json()
    assert [job["id"] for job in listed["jobs"]] == [answer["id"]]
    assert (service.state_dir / "blobs" / "jobs" / answer["id"] / "job.tar.gz").is_file()

    # A tampered job: the client checks the seal itself, and sends nothing.
    tampered = tmp_path / "tampered" / run_job.path.name
    shutil.copytree(run_job.path, tampered)
    next(tampered.glob("prime-factor__*/verifier/reward.txt")).write_text("1")

    edited = send(service, tampered, "--token-env", "HPG_API_TOKEN", token=token)

    assert edited.returncode == 1
    assert "(manifest-file-changed)" in edited.stderr

    # A job sealed intact that breaks a rule: the service refuses it, with its code.
    retried = tmp_path / "retried" / run_job.path.name
    shutil.copytree(run_job.path, retried)
    no_exclusions = {"max_retries": 1, "exclude_exceptions": []}
    edit_json(retried / "config.json", lambda data: data.update(retry=no_exclusions))
    reseal(retried)

    refused = send(service, retried, "--token-env", "HPG_API_TOKEN", token=token)

    assert refused.returncode == 1
    assert "(job-retries-not-crashes)" in refused.stderr
    assert "The service answered 422" in refused.stderr
    listed = httpx.get(f"{service.url}/api/bench/jobs", headers=mine).json()
    assert len(listed["jobs"]) == 1

    # An issued run of the job's spec, with its run token alone: accepted once.
    database = Database(database_url)
    try:
        with database.session() as session:
            run = issue_run(session, dict(run_job.spec), issued_at=utcnow() - timedelta(minutes=5))
        header = f"hpg-run-token: {run.token}"

        first = send(service, run_job.path, "-H", header)
        second = httpx.post(
            f"{service.url}/api/bench/uploads",
            content=packed(run_job.path),
            headers={"hpg-run-token": run.token, "content-type": "application/gzip"},
            # The service checks the whole job before it refuses it, on a machine the
            # other tests share: httpx's 5 s default ran out once in CI.
            timeout=60,
        )

        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["issued_run_id"] == str(run.run_id)
        assert (second.status_code, second.json()["code"]) == (409, "bench-published-before")
        with database.session() as session:
            assert run_status(session, run.run_id) is IssuedRunStatus.UPLOADED
    finally:
        database.dispose()
