"""The runner image, built for real from actions/run/Dockerfile on the local Python base,
runs the demo as the Action's run step does and uploads the job to the real service.

The image is built once per session, or reused when its inputs (the Dockerfile, its
context and the base's recipe) are those it was built from (tools/images.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.db.models import Job
from hbench.action.protocol import Inputs
from hbench.action.run import DOCKER_SOCKET, Plan, docker_run, plan
from hbench.demo import demo_spec, materialize
from hbench.jobs.manifest import verify
from hbench.jobs.reader import read_job
from tests.action.conftest import Service
from tools import dockerhost, images

pytestmark = pytest.mark.docker

TAG = "hbench-runner:test"
RUNNER_UID = 1001
"""The uid of GitHub's hosted runners' user, who owns the workspace there."""
TOKEN_VARIABLE = "HBENCH_UPLOAD_TOKEN"


@pytest.fixture(scope="module")
def runner_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The runner image built on the local base: its tag, while Docker is leased."""
    try:
        lease = dockerhost.acquire((images.TASK_BASE, images.PYTHON_BASE))
    except dockerhost.DockerUnavailableError as error:
        pytest.skip(f"Docker can't run here: {error}")
    try:
        log = tmp_path_factory.mktemp("runner-image") / "build.log"
        images.build_runner_image(lease.docker, TAG, log=log)
        yield lease.docker
    finally:
        lease.release()


def docker(docker_cli: str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the docker CLI; fail the test with its output when it fails."""
    done = subprocess.run(
        [docker_cli, *args], capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, f"docker {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def owned_by(uid: int, folder: Path) -> None:
    for path in (folder, *folder.rglob("*")):
        os.chown(path, uid, uid, follow_symlinks=False)


def test_the_image_runs_the_demo_as_the_action_does_and_the_service_takes_it(
    runner_image: str, service: Service, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    run_dir = workspace / "runs" / "demo-in-image"
    run_dir.mkdir(parents=True)
    registry = materialize(workspace / "demo")  # inside the workspace: same path both sides
    spec = demo_spec(registry, "demo-in-image", environment="docker")
    (run_dir / "spec.json").write_text(json.dumps(spec, indent=2))
    run = {"job_name": "demo-in-image", "environment": [{"name": "HARBOR_TELEMETRY", "value": "0"}]}
    (run_dir / "run.json").write_text(json.dumps(run))
    owned_by(RUNNER_UID, workspace)

    planned = plan(Inputs({"INPUT_RUN_DIR": str(run_dir)}), workspace, {})
    argv = docker_run(planned, workspace, TAG)
    docker(runner_image, *argv[1:], env=planned.values)

    job_dir = planned.job_dir
    assert verify(job_dir) == []
    job = read_job(job_dir)
    assert job.config.environment.type == "docker"
    rewards = {t.task_name: t.reward for t in job.trials}
    assert rewards == {
        "count-lines": 1.0, "hello-file": 1.0, "prime-factor": 0.0,
        "reverse-words": 1.0, "sum-numbers": 1.0,
    }  # fmt: skip
    # The run wrote as the workspace's owner, not as root.
    assert {p.stat().st_uid for p in (job_dir, *job_dir.rglob("*"))} == {RUNNER_UID}

    # The upload runs in the image too, on the host's network to reach the service on
    # loopback, the API token passed by name only.
    upload = Plan(
        run_dir, job_dir, (TOKEN_VARIABLE,), {},
        ("hbench", "jobs", "upload", "--url", f"{service.url}/api/bench/uploads",
         "--token-env", TOKEN_VARIABLE, str(job_dir)),
    )  # fmt: skip
    argv = docker_run(upload, workspace, TAG)
    argv[2:2] = ["--network", "host"]
    answer = docker(runner_image, *argv[1:], env={TOKEN_VARIABLE: service.api_token})

    assert service.api_token not in " ".join(argv) + answer
    assert '"status": "private"' in answer
    with service.database.session() as session:
        stored = session.scalars(select(Job).where(Job.job_name == "demo-in-image")).all()
    assert [str(j.job_id) for j in stored] == [job.job_id]


def test_commands_run_as_the_user_hbench_with_the_folders_owner_uid(
    runner_image: str, tmp_path: Path
) -> None:
    folder = tmp_path / "owned"
    folder.mkdir()
    owned_by(RUNNER_UID, folder)
    socket_gid = Path(DOCKER_SOCKET).stat().st_gid
    run = ["run", "--rm", "-v", f"{DOCKER_SOCKET}:{DOCKER_SOCKET}", "-v", f"{folder}:{folder}"]

    in_root_folder = docker(runner_image, "run", "--rm", "-w", "/", TAG, "id", "-u", "-n")
    script = "id -u; id -G; touch made; docker version -f '{{.Server.Version}}'"
    in_owned = docker(runner_image, *run, "-w", str(folder), TAG, "sh", "-c", script)

    assert in_root_folder.strip() == "hbench"
    uid, groups, server = in_owned.split("\n")[:3]
    assert int(uid) == RUNNER_UID
    assert str(socket_gid) in groups.split()
    assert server  # the daemon answered through the mounted socket
    assert (folder / "made").stat().st_uid == RUNNER_UID


def test_harbors_task_cache_is_on_the_cache_volume(runner_image: str) -> None:
    target = docker(runner_image, "run", "--rm", TAG, "readlink", "/home/hbench/.cache/harbor")
    volumes = docker(runner_image, "image", "inspect", "-f", "{{json .Config.Volumes}}", TAG)

    assert target.strip() == "/cache/harbor"
    assert json.loads(volumes) == {"/cache": {}}
