"""Harbor's own template task, as `harbor tasks init` makes it, run for real and uploaded.

Harbor ships the task a new author starts from (`harbor/cli/template-task/`). Two are made
here with `harbor tasks init`, as Harbor makes them: the default, whose verifier runs in a
separate environment, and one with `--verifier-mode shared`. The oracle runs both, in
hbench's bubblewrap sandbox (made once per machine in the job cache); hbench seals the
job; the service takes it.

What Harbor makes of its templates is a job with little in it: the default task's tests
never reach the sandbox, which runs one environment, so its trial ends in Harbor's
`RewardFileNotFoundError`; the shared task's tests fetch their tools from the network,
which the sandbox has not, and score 0. The service takes the job, a job of tasks from a
folder of one's own: kept privately on Your bench and offered no board
(`board-local-tasks`), every check it ran passed or skipped but `tasks-from-registry`,
which says why.

Harbor's lock.json names a task from a folder by the folder (`template-shared`), its
result by the task's `[task].name` (`hbench-tests/template-shared`), as every task
`harbor tasks init` makes has one; the reader matches the two through each trial's own
lock, where the service once refused such a job as edited (`job-plan-mismatch`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from hbench.jobs.reader import read_job
from hbench.jobs.sealing import seal
from hbench.sandbox import IMPORT_PATH
from tests.conftest import run_harbor
from tests.support.jobcache import JobCache

from ..conftest import TokenFactory, bearer
from .conftest import job_rows, upload
from .jobs import edit_json, packed, reseal

JOB_NAME = "harbor-templates"
ORG = "hbench-tests"
TASKS = {
    "template-separate": (),
    "template-shared": ("--verifier-mode", "shared"),
}
"""The tasks `harbor tasks init` makes, by name, with the flags each is made with."""


def harbor_templates(root: Path, _registry: Path) -> Path:
    """The job's recipe: each task initialised by Harbor in `root/tasks`, then the oracle
    over that folder in the sandbox."""
    tasks = root / "tasks"
    for name, flags in TASKS.items():
        run_harbor(root, "tasks", "init", f"{ORG}/{name}", "-p", str(tasks), *flags)
    run_harbor(
        root,
        "run", "-y", "-q",
        "-p", str(tasks),
        "--env", IMPORT_PATH,
        "-a", "oracle",
        "-o", "jobs", "--job-name", JOB_NAME,
    )  # fmt: skip
    return root / "jobs" / JOB_NAME


@pytest.fixture(scope="module")
def template_job(
    job_cache: JobCache, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A copy of the cached job, sealed as `hbench run` seals a job it was not issued."""
    entry = job_cache.get("harbor-templates", (), harbor_templates)
    job = entry.checkout(tmp_path_factory.mktemp("harbor-templates"), demo_registry.parent)
    seal(job)
    return job


def test_harbor_makes_its_templates_a_job_of_two_trials(template_job: Path) -> None:
    job = read_job(template_job)
    config = json.loads((template_job / "config.json").read_text())
    assert [Path(d["path"]).name for d in config["datasets"]] == ["tasks"]
    trials = {trial.task_name: trial for trial in job.trials}
    assert set(trials) == {f"{ORG}/{name}" for name in TASKS}
    separate, shared = trials[f"{ORG}/template-separate"], trials[f"{ORG}/template-shared"]
    assert separate.exception_type == "RewardFileNotFoundError"
    assert shared.exception_type is None and shared.reward == 0.0


def test_the_job_is_kept_on_your_bench_and_offered_no_board(
    client: TestClient, db: Session, make_token: TokenFactory, template_job: Path
) -> None:
    token = make_token("alice")
    answer = upload(client, packed(template_job), **bearer(token))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["status"] == "private"
    assert (body["agent"], body["name"]) == ("oracle", JOB_NAME)
    assert body["boards"]["fits"] == [] and body["boards"]["opens"] is None
    assert [note["code"] for note in body["boards"]["notes"]] == ["board-local-tasks"]
    failed = [check["rule"] for check in body["checks"] if check["status"] == "failed"]
    assert failed == ["tasks-from-registry"]  # noted, not refused: why it fits no board
    assert {check["status"] for check in body["checks"]} == {"passed", "skipped", "failed"}
    assert body["score"] == 0.0
    [row] = job_rows(db)
    assert str(row.id) == body["id"]

    listed = client.get("/api/bench/jobs", headers=bearer(token))
    assert listed.status_code == 200, listed.text
    assert [job["id"] for job in listed.json()["jobs"]] == [body["id"]]


def test_a_result_naming_another_task_is_still_unplanned(
    client: TestClient, make_token: TokenFactory, template_job: Path, tmp_path: Path
) -> None:
    """Only Harbor's own `org/<folder>` is read as the locked task: a result renamed to
    any other task is one the lock never planned, as before."""
    job = tmp_path / template_job.name
    shutil.copytree(template_job, job)
    [trial] = job.glob("template-shared__*")
    edit_json(trial / "result.json", lambda data: data.update(task_name=f"{ORG}/another"))
    reseal(job)

    answer = upload(client, packed(job), **bearer(make_token("alice")))

    assert (answer.status_code, answer.json()["code"]) == (422, "job-plan-mismatch"), answer.text
