"""Whether a job can be regraded is decided at upload, and a job that can't says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.db.models import RegradeStatus
from app.regrade.plan import RegradeInput, plan_regrade, redacted_trials
from hbench.jobs.locks import task_digests
from hbench.jobs.models import Job
from hbench.jobs.reader import read_job
from registry.demo import DATASET_REF, TASKS_DIR
from tests.conftest import HarborJobFactory


@pytest.fixture(scope="module")
def job(harbor_job: HarborJobFactory) -> Job:
    return read_job(harbor_job("oracle-k2", "-k", "2"))


def given(job: Job, **changes: object) -> RegradeInput:
    values: dict[str, object] = {
        "job": job,
        "dataset": DATASET_REF,
        "enabled": True,
        "tasks_root": None,
        "pinned": None,
        "digests": task_digests(job),
        "redactions": {},
    }
    values.update(changes)
    return RegradeInput(**values)  # type: ignore[arg-type]  # keyword values of mixed types


def why(plan_input: RegradeInput) -> str | None:
    plan = plan_regrade(plan_input)
    assert (plan.status == RegradeStatus.QUEUED) == (plan.note is None)
    return plan.note


def test_a_demo_job_is_queued(job: Job) -> None:
    assert plan_regrade(given(job)).status == RegradeStatus.QUEUED


def test_a_service_that_does_not_regrade_says_so(job: Job) -> None:
    assert why(given(job, enabled=False)) == "this service does not regrade jobs"


def test_tasks_the_service_has_no_copy_of_are_not_regradable(job: Job, tmp_path: Path) -> None:
    assert "no copy of them" in (why(given(job, dataset=None)) or "")
    assert why(given(job, dataset="terminal-bench@2.0", tasks_root=tmp_path)) == (
        "the service keeps no copy of terminal-bench@2.0's tasks to grade with"
    )
    # A dataset the operator keeps a checkout of is graded with it.
    shutil.copytree(TASKS_DIR, tmp_path / "other@1.0")
    assert why(given(job, dataset="other@1.0", tasks_root=tmp_path)) is None
    shutil.rmtree(tmp_path / "other@1.0" / "sum-numbers")
    assert why(given(job, dataset="other@1.0", tasks_root=tmp_path)) == (
        "the service's copy of other@1.0 has no task sum-numbers"
    )


def test_tasks_graded_in_the_agents_environment_are_not_regradable(
    job: Job, tmp_path: Path
) -> None:
    shutil.copytree(TASKS_DIR, tmp_path / "shared@1.0")
    toml = tmp_path / "shared@1.0" / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace('"separate"', '"shared"'))
    assert why(given(job, dataset="shared@1.0", tasks_root=tmp_path)) == (
        "the verifiers of hello-file run in the agent's own environment (Harbor's shared "
        "verifier mode), which is gone once the trial ends"
    )


def test_other_task_files_than_the_pinned_ones_are_not_regradable(job: Job) -> None:
    pinned = {**task_digests(job), "prime-factor": "sha256:" + "0" * 64}
    assert why(given(job, pinned=pinned)) == (
        f"it ran other task files than the ones pinned for {DATASET_REF}"
    )


def test_outputs_redaction_changed_are_not_regraded(job: Job) -> None:
    trial = job.results[0].trial_name
    redactions = {
        f"{trial}/agent/oracle.txt": 1,
        f"{trial}/verifier/test-stdout.txt": 2,  # the verifier's own output: not an input
        "job.log": 1,
    }
    assert redacted_trials(redactions) == [trial]
    assert why(given(job, redactions=redactions)) == (
        f"the service replaced key-like values in the recorded outputs of 1 trial ({trial}) "
        "before storing them, so grading them again would grade other outputs"
    )
    assert why(given(job, redactions={f"{trial}/verifier/test-stdout.txt": 2})) is None
