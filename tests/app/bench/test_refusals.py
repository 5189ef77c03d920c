"""Every refusal of the upload's rule table, sent for real: its code, and nothing stored.

Each case copies the sealed real job, changes it as a person or a broken tool might, and
reseals it where the case is about the rule table rather than the seal.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.settings import Settings
from hbench.jobs.manifest import MANIFEST_NAME

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import assert_nothing_stored, upload
from .jobs import SealedJob, edit_json, edit_manifest, packed, reseal, trial_folders


@dataclass(frozen=True)
class Case:
    """A change to the sealed job, whether to seal it again after, and the codes it earns
    (the first is the refusal's own code)."""

    edit: Callable[[Path], None]
    codes: tuple[str, ...]
    reseal: bool = True


def config(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda job: edit_json(job / "config.json", change)


def setting(**values: Any) -> Callable[[Path], None]:
    return config(lambda data: data.update(values))


def first_trial(job: Path) -> Path:
    return trial_folders(job)[0]


def append_retry_log(job: Path) -> None:
    """A retry of a timeout, as Harbor logs it when its exclusions were bypassed."""
    setting(retry={"max_retries": 1})(job)
    trial = first_trial(job).name
    with (job / "job.log").open("a") as log:
        log.write(f"Trial {trial} failed with exception AgentTimeoutError. Retrying in 1.00s\n")


def remove_all_trials(job: Path) -> None:
    for trial in trial_folders(job):
        shutil.rmtree(trial)
    edit_json(job / "result.json", lambda data: data.update(n_total_trials=0))


def failed_trial(job: Path) -> Path:
    return next(t for t in trial_folders(job) if t.name.startswith("prime-factor__"))


def pass_a_failed_trial(job: Path) -> None:
    """A failed trial's reward set to 1 in its result.json and its reward.txt: the forgery
    `hbench jobs resume` refuses to seal, sealed here with hbench's own sealing code."""
    trial = failed_trial(job)
    edit_json(trial / "result.json", lambda r: r["verifier_result"]["rewards"].update(reward=1.0))


def drop_a_trial(job: Path) -> None:
    shutil.rmtree(failed_trial(job))

    def fewer(result: dict[str, Any]) -> None:
        result["n_total_trials"] -= 1
        result["stats"]["n_completed_trials"] -= 1

    edit_json(job / "result.json", fewer)


def add_a_trial(job: Path) -> None:
    source = next(t for t in trial_folders(job) if t.name.startswith("hello-file__"))
    shutil.copytree(source, job / "hello-file__AddedX")


CASES: dict[str, Case] = {
    # The seal: the manifest is there, readable, recent enough, and matches every byte.
    "no manifest": Case(
        lambda job: (job / MANIFEST_NAME).unlink(), ("manifest-missing",), reseal=False
    ),
    "unreadable manifest": Case(
        lambda job: (job / MANIFEST_NAME).write_text("{not json"), ("manifest-invalid",), False
    ),
    "a changed file": Case(
        lambda job: (first_trial(job) / "verifier" / "reward.txt").write_text("1"),
        ("manifest-file-changed",),
        reseal=False,
    ),
    "an added file": Case(
        lambda job: (job / "notes.txt").write_text("added"), ("manifest-file-extra",), False
    ),
    "a removed file": Case(
        lambda job: (first_trial(job) / "trial.log").unlink(), ("manifest-file-missing",), False
    ),
    "an old hbench": Case(
        lambda job: edit_manifest(job, hbench_version="0.2.9"),
        ("hbench-version-too-old",),
        reseal=False,
    ),
    "another job's manifest": Case(
        lambda job: edit_manifest(job, job_id=str(uuid.uuid4())),
        ("manifest-invalid",),
        reseal=False,
    ),
    # The job: Harbor's, finished, complete.
    "unfinished": Case(
        lambda job: edit_json(job / "result.json", lambda data: data.update(finished_at=None)),
        ("job-unfinished",),
    ),
    "a trial missing": Case(lambda job: shutil.rmtree(first_trial(job)), ("job-incomplete",)),
    "a damaged trial result": Case(
        lambda job: (first_trial(job) / "result.json").write_text("{"), ("job-json-invalid",)
    ),
    "no trials": Case(remove_all_trials, ("job-no-trials",)),
    # What ran.
    "two datasets": Case(
        config(lambda data: data["datasets"].append({"path": "/srv/tasks"})),
        ("job-several-datasets",),
    ),
    "two agents": Case(
        setting(agents=[{"name": "oracle"}, {"name": "nop"}]), ("job-several-agents",)
    ),
    "two models": Case(
        setting(
            agents=[{"name": "nop", "model_name": "a/m1"}, {"name": "nop", "model_name": "b/m2"}]
        ),
        ("job-several-models",),
    ),
    # Every failure is listed: the job has two of six attempts each, and six is too many.
    "six attempts": Case(setting(n_attempts=6), ("job-incomplete", "job-attempts-out-of-range")),
    # Forgeries sealed again: each disagrees with another copy the job keeps.
    "a reward edited and sealed again": Case(pass_a_failed_trial, ("trial-reward-mismatch",)),
    "a trial dropped, its counts edited, sealed again": Case(
        drop_a_trial, ("job-incomplete", "job-plan-mismatch")
    ),
    "a trial added and sealed again": Case(add_a_trial, ("job-trials-extra", "job-plan-mismatch")),
    "a trial's time moved and sealed again": Case(
        lambda job: edit_json(
            first_trial(job) / "result.json", lambda r: r.update(started_at="2020-01-01T00:00:00Z")
        ),
        ("trial-time-outside-job",),
    ),
    # How it ran.
    "timeouts retried": Case(
        setting(retry={"max_retries": 1, "exclude_exceptions": ["RewardFileNotFoundError"]}),
        ("job-retries-not-crashes",),
    ),
    "a retry list": Case(
        setting(retry={"max_retries": 2, "include_exceptions": ["RuntimeError"]}),
        ("job-retries-not-crashes",),
    ),
    "a timeout retried in the log": Case(append_retry_log, ("job-retries-not-crashes",)),
}
"""A prompt template, extra instructions or an environment no board allows keep a job off
the boards but not off Your bench: tests/app/publish/test_private_jobs.py."""


@pytest.mark.parametrize("name", list(CASES))
def test_a_job_failing_a_rule_is_refused_and_nothing_is_stored(
    name: str,
    *,
    client: TestClient,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    case = CASES[name]
    job = sealed.copy_to(tmp_path)
    case.edit(job)
    if case.reseal:
        reseal(job)
    remote = TestClient(client.app, **REMOTE)

    answer = upload(remote, packed(job), **bearer(make_token("alice")))

    assert answer.status_code == 422, answer.text
    body = answer.json()
    codes = [error["code"] for error in body["errors"]]
    assert body["code"] == case.codes[0]
    assert body["detail"].endswith(f" ({case.codes[0]})")
    assert set(case.codes) <= set(codes), codes
    # Messages name the job as the sender knows it, never the service's scratch folder.
    assert str(settings.state_dir) not in json.dumps(body)
    assert_nothing_stored(db, settings)


def test_every_failure_is_listed_not_only_the_first(
    client: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    job = sealed.copy_to(tmp_path)
    setting(
        n_attempts=6,
        agents=[{"name": "oracle", "kwargs": {"prompt_template_path": "p.j2"}}, {"name": "nop"}],
        retry={"max_retries": 1, "include_exceptions": ["RuntimeError"]},
    )(job)
    reseal(job)
    (job / "notes.txt").write_text("added after sealing")

    answer = upload(client, packed(job), **bearer(make_token("alice")))

    assert answer.status_code == 422
    codes = [error["code"] for error in answer.json()["errors"]]
    assert codes == [
        "manifest-file-extra",
        "job-incomplete",
        "job-several-agents",
        "job-attempts-out-of-range",
        "job-plan-mismatch",
        "job-retries-not-crashes",
    ]
    # The prompt template keeps it off the boards, which is no reason to refuse it.
    assert answer.json()["detail"].endswith("; and 5 more problems (manifest-file-extra)")
    assert_nothing_stored(db, settings)


def test_a_job_of_tasks_from_a_folder_stays_private_on_no_board(
    client: TestClient, make_token: TokenFactory, sealed: SealedJob, tmp_path: Path
) -> None:
    job = sealed.copy_to(tmp_path)
    config(lambda data: data.update(datasets=[{"path": "/home/me/tasks"}]))(job)
    reseal(job)

    answer = upload(client, packed(job), **bearer(make_token("alice")))

    assert answer.status_code == 201, answer.text
    boards = answer.json()["boards"]
    assert boards["fits"] == [] and boards["opens"] is None
    assert [note["code"] for note in boards["notes"]] == ["board-local-tasks"]
