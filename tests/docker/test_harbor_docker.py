"""Harbor's own docker environment runs the demo dataset for real, as users run real
benchmarks: each task's image built from its Dockerfile, `FROM debian:bookworm-slim`
(here the image tools/dockerhost.py imports under that name, since Docker Hub is out of
reach), with `docker compose`, and each trial graded in a verifier environment of its own
from what the agent left in /app."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hbench.jobs.completeness import completeness_problems
from hbench.jobs.consistency import consistency_problems
from hbench.jobs.reader import read_job
from hbench.jobs.sealing import seal
from hbench.jobs.verification import verify
from registry.demo import DATASET_REF, TASKS_DIR
from tests.conftest import run_harbor
from tools import dockerhost, images

pytestmark = pytest.mark.docker

EXPECTED_REWARDS = {
    "count-lines": 1.0,
    "hello-file": 1.0,
    "prime-factor": 0.0,  # the oracle's solution is wrong on purpose
    "reverse-words": 1.0,
    "sum-numbers": 1.0,
}


@pytest.fixture(scope="module")
def docker_job(
    docker_host: dockerhost.Lease, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """One real job of the demo dataset with Harbor's docker environment and the oracle."""
    root = tmp_path_factory.mktemp("docker-jobs")
    run_harbor(
        root,
        "run", "-y", "-q",
        "-d", DATASET_REF, "--registry-path", str(demo_registry),
        "-e", "docker", "-a", "oracle",
        "-o", "jobs", "--job-name", "demo-docker",
    )  # fmt: skip
    return root / "jobs" / "demo-docker"


def trial_results(job_dir: Path) -> dict[str, dict[str, object]]:
    results = (json.loads(p.read_text()) for p in job_dir.glob("*/result.json"))
    return {str(result["task_name"]): result for result in results}


def test_the_oracle_solves_four_of_the_five_tasks_in_docker(docker_job: Path) -> None:
    job = read_job(docker_job)

    assert job.config.environment.type == "docker"
    assert len(job.trials) == 5
    assert {t.task_name: t.reward for t in job.trials} == EXPECTED_REWARDS
    assert [t.exception_type for t in job.trials] == [None] * 5
    assert completeness_problems(job) == []
    assert consistency_problems(job) == []


def test_each_trial_is_graded_in_a_verifier_environment_of_its_own(docker_job: Path) -> None:
    results = trial_results(docker_job)

    assert {name: r["verifier_environment_mode"] for name, r in results.items()} == dict.fromkeys(
        EXPECTED_REWARDS, "separate"
    )
    # What the agent left in /app is kept with the trial: the verifier graded that copy.
    (count_lines,) = docker_job.glob("count-lines__*")
    assert (count_lines / "artifacts" / "app" / "count.txt").read_text().strip() == "3"
    assert (count_lines / "verifier" / "reward.txt").read_text().strip() == "1"


def test_the_docker_job_is_sealed_and_its_seal_holds(docker_job: Path, tmp_path: Path) -> None:
    job_dir = tmp_path / docker_job.name
    shutil.copytree(docker_job, job_dir, symlinks=True)

    manifest = seal(job_dir)

    assert verify(job_dir) == []
    listed = {f.path for f in manifest.files}
    assert "result.json" in listed
    assert len([p for p in listed if p.endswith("/verifier/reward.txt")]) == 5
    (job_dir / "result.json").write_text("{}")
    assert [p.code for p in verify(job_dir)] == ["manifest-file-changed"]


def test_the_task_base_is_the_local_import_under_the_dockerfiles_name(
    docker_host: dockerhost.Lease,
) -> None:
    dockerfiles = sorted(TASKS_DIR.glob("*/environment/Dockerfile"))
    assert len(dockerfiles) == 5
    assert {p.read_text().splitlines()[0] for p in dockerfiles} == {f"FROM {images.TASK_BASE.tag}"}
    recipe = images.image_label(docker_host.docker, images.TASK_BASE.tag, images.RECIPE_LABEL)
    assert recipe == images.TASK_BASE.key()
    # Harbor's environments idle in `sh -c "sleep infinity"`, which ignores SIGTERM: the
    # base stops on SIGKILL, so a trial's stop does not wait out Docker's 10 s grace.
    signal = subprocess.run(
        [docker_host.docker, "image", "inspect", "--format", "{{.Config.StopSignal}}",
         images.TASK_BASE.tag],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    assert signal == "SIGKILL"
