"""The service image (app/Dockerfile) as `make service-image` builds it: it runs as a user
of its own, answers its health, readiness and metrics, logs JSON lines, and keeps its
state on the /state volume; and deploy/compose.yml is a valid Compose file."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tools import dockerhost, images

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
TAG = "hbench-service:test"


@pytest.fixture(scope="module")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        lease = dockerhost.acquire((images.TASK_BASE, images.PYTHON_BASE))
    except dockerhost.DockerUnavailableError as error:
        pytest.skip(f"Docker can't run here: {error}")
    try:
        log = tmp_path_factory.mktemp("service-image") / "build.log"
        images.build_image(lease.docker, images.SERVICE, TAG, log=log)
        yield lease.docker
    finally:
        lease.release()


def run(docker: str, *args: str) -> str:
    done = subprocess.run([docker, *args], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


@pytest.mark.timeout(900)
def test_the_service_image_runs_unprivileged_and_answers_health_ready_and_metrics(
    docker: str,
) -> None:
    assert run(docker, "run", "--rm", "--entrypoint", "id", TAG, "-u") == "1000"
    name = f"hbench-service-test-{time.monotonic_ns()}"
    run(docker, "run", "-d", "--name", name, "-p", "127.0.0.1::8000",
        "-e", "HBENCH_REGRADE_ENABLED=false", TAG)  # fmt: skip
    try:
        port = run(docker, "port", name, "8000/tcp").rsplit(":", 1)[-1]
        base = f"http://127.0.0.1:{port}"
        wait_for_200(f"{base}/api/ready", lambda: run(docker, "logs", name))
        assert httpx.get(f"{base}/api/health").json()["status"] == "ok"
        assert "hbench_http_requests_total" in httpx.get(f"{base}/metrics").text
        # Ready once the first site build after start has finished, not before.
        assert httpx.get(f"{base}/site/index.html").status_code == 200
        logs = subprocess.run(
            [docker, "logs", name], capture_output=True, text=True, timeout=60, check=True
        )
        lines = [
            json.loads(x) for x in (logs.stdout + logs.stderr).splitlines() if x.startswith("{")
        ]
        assert any(x["logger"] == "uvicorn.access" for x in lines)
        listed = run(docker, "exec", name, "ls", "/state")
        assert {"hbench.sqlite3", "site", "data"} <= set(listed.split())
    finally:
        subprocess.run([docker, "rm", "-f", name], capture_output=True, timeout=60, check=False)


def wait_for_200(url: str, logs: Callable[[], str], seconds: float = 120) -> None:
    """Poll `url` until it answers 200; after `seconds`, fail with the container's logs."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, logs()
        time.sleep(0.5)


def test_the_compose_file_is_valid_and_starts_two_replicas_and_a_writer(tmp_path: Path) -> None:
    compose = shutil.which("docker")
    if compose is None:
        pytest.skip("no docker CLI here")
    folder = tmp_path / "deploy"
    folder.mkdir()
    shutil.copy(ROOT / "deploy" / "compose.yml", folder / "compose.yml")
    env = (ROOT / "deploy" / "example.env").read_text()
    for name in ("POSTGRES_PASSWORD", "S3_ACCESS_KEY", "S3_SECRET_KEY"):
        env = env.replace(f"{name}=\n", f"{name}=x{len(name)}\n")
    (folder / ".env").write_text(env)
    (folder / "github-app.env").write_text("")
    done = subprocess.run(
        [compose, "compose", "-f", str(folder / "compose.yml"), "config", "--format", "json"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    services = json.loads(done.stdout)["services"]
    assert {"postgres", "s3", "service-1", "service-2", "writer"} <= set(services)
    writer = services["writer"]
    assert writer["command"] == ["data-repo", "write"]
    for replica in ("service-1", "service-2"):
        environment = services[replica]["environment"]
        assert environment["HBENCH_WRITER_ENABLED"] == "false"
        assert environment["HBENCH_SITE_FOLLOW"] == "true"
        assert environment["HBENCH_BLOB_STORE"] == "s3"
    assert writer["environment"]["HBENCH_SITE_FOLLOW"] == "false"
