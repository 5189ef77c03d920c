"""The runner image, built for real from actions/run/Dockerfile on the local Python base
(once per session, tests/action/conftest.py): who its commands run as, what enters it, and
where Harbor's task cache lives. The Action's own tests run the demo in it."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hbench.action.container import DOCKER_SOCKET, docker_run
from hbench.action.protocol import Inputs
from hbench.action.run_plan import plan
from tests.action.conftest import IMAGE, chown_tree
from tests.http_stub import StubHandler, stub_server

pytestmark = pytest.mark.docker

RUNNER_UID = 1001
"""The uid of GitHub's hosted runners' user, who owns the workspace there."""
IMAGE_ENV = {"PATH", "HOSTNAME", "HOME", "HARBOR_TELEMETRY", "PYTHONUNBUFFERED", "USER",
             "LOGNAME", "PWD", "LC_CTYPE"}  # fmt: skip
"""What the image itself sets: its ENV lines, docker's own, the entrypoint's user and
folder, and Python's locale coercion (PEP 538)."""
PROBE = """\
import json, os, sys, urllib.request
answer = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
print(json.dumps({"env": dict(os.environ), "answer": answer}))
"""


def docker(docker_cli: str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the docker CLI; fail the test with its output when it fails."""
    done = subprocess.run(
        [docker_cli, *args], capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, f"docker {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_only_named_variables_enter_and_the_host_network_reaches_its_loopback(
    runner_image: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    run_dir = workspace / "hbench-runs" / "probe"
    run_dir.mkdir(parents=True)
    (run_dir / "spec.json").write_text("{}")
    details = {"job_name": "probe", "environment": [{"name": "HARBOR_TELEMETRY", "value": "0"}]}
    (run_dir / "run.json").write_text(json.dumps(details))
    chown_tree(workspace, RUNNER_UID)
    environ = {
        "ANTHROPIC_API_KEY": "sk-ant-probe",
        "E2B_API_KEY": "e2b-probe-key",
        "LAB_URL": "http://lab.example",
        "GITHUB_TOKEN": "ghs_not_for_the_container",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "not-for-the-container",
        "SOME_CLOUD_SECRET": "not-for-the-container",
        "HBENCH_EXTRA_ENV": "LAB_TOKEN=lab-secret\n",
    }
    inputs = Inputs(
        {"INPUT_RUN_DIR": str(run_dir), "INPUT_PASS_ENV": "LAB_URL LAB_TOKEN",
         "INPUT_NETWORK": "host"}
    )  # fmt: skip

    class Pong(StubHandler):
        def do_GET(self) -> None:
            self.send_json(200, "pong")

    with stub_server(Pong) as port:
        planned = plan(inputs, workspace, environ)
        probe = replace(planned, command=("python3", "-c", PROBE, f"http://127.0.0.1:{port}/"))
        argv = docker_run(probe, workspace, IMAGE, "hbench-probe")
        seen = json.loads(docker(runner_image, *argv[1:], env={**environ, **planned.values}))

    assert seen["answer"] == '"pong"'  # the runner's loopback, from inside the container
    assert set(seen["env"]) - IMAGE_ENV == {"ANTHROPIC_API_KEY", "E2B_API_KEY", "LAB_URL",
                                            "LAB_TOKEN"}  # fmt: skip
    assert seen["env"]["LAB_TOKEN"] == "lab-secret"
    assert seen["env"]["HARBOR_TELEMETRY"] == "0"
    assert not any(value in " ".join(argv) for value in environ.values())


def test_commands_run_as_the_owner_of_their_folder(runner_image: str, tmp_path: Path) -> None:
    owned, roots = tmp_path / "owned", tmp_path / "roots"
    owned.mkdir()
    roots.mkdir()
    chown_tree(owned, RUNNER_UID)
    socket_gid = Path(DOCKER_SOCKET).stat().st_gid
    run = ["run", "--rm", "-v", f"{DOCKER_SOCKET}:{DOCKER_SOCKET}"]
    script = "id -u; id -G; touch made; docker version -f '{{.Server.Version}}'"

    in_image = docker(runner_image, "run", "--rm", IMAGE, "id", "-u", "-n")
    in_owned = docker(
        runner_image, *run, "-v", f"{owned}:{owned}", "-w", str(owned), IMAGE, "sh", "-c", script
    )
    in_roots = docker(
        runner_image, *run, "-v", f"{roots}:{roots}", "-w", str(roots), IMAGE, "sh", "-c", script
    )

    assert in_image.strip() == "hbench"  # the image's own folder, /home/hbench
    uid, groups, server = in_owned.split("\n")[:3]
    assert int(uid) == RUNNER_UID
    assert str(socket_gid) in groups.split()
    assert server  # the daemon answered through the mounted socket
    assert (owned / "made").stat().st_uid == RUNNER_UID
    # A runner that runs as root has a workspace of root's, where only root can write.
    assert in_roots.split("\n")[0] == "0"
    assert (roots / "made").stat().st_uid == 0


def test_harbors_task_cache_is_on_the_cache_volume(runner_image: str) -> None:
    target = docker(runner_image, "run", "--rm", IMAGE, "readlink", "/home/hbench/.cache/harbor")
    volumes = docker(runner_image, "image", "inspect", "-f", "{{json .Config.Volumes}}", IMAGE)

    assert target.strip() == "/cache/harbor"
    assert json.loads(volumes) == {"/cache": {}}


def test_the_image_carries_the_remote_sandboxes_harbor_runs_trials_in(runner_image: str) -> None:
    script = (
        "import daytona, e2b, modal, runloop_api_client\n"
        "from harbor.environments.factory import EnvironmentFactory\n"
        "print('ok')\n"
    )
    assert docker(runner_image, "run", "--rm", IMAGE, "python", "-c", script).strip() == "ok"
