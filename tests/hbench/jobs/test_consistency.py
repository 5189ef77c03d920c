"""A job's files agree with each other, and every edit that misses a copy is named."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hbench.jobs.consistency import consistency_problems
from hbench.jobs.reader import read_job
from hbench.jobs.trial_times import zone_offset
from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF
from tests.conftest import run_harbor

CopyJob = Callable[[Path], Path]
HONEST = ["oracle", "nop", "models", "errored", "retried", "broken", "timeout", "killed"]


@pytest.mark.parametrize("name", HONEST)
def test_a_job_as_harbor_wrote_it_agrees_with_itself(real_jobs: dict[str, Path], name: str) -> None:
    assert consistency_problems(read_job(real_jobs[name])) == []


def test_a_job_run_far_from_utc_agrees_with_itself(
    tmp_path: Path, demo_registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Harbor writes the job's times in the machine's local time, its trials' in UTC.
    monkeypatch.setenv("TZ", "Asia/Kathmandu")  # UTC+05:45
    run_harbor(
        tmp_path,
        "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(demo_registry),
        "--env", IMPORT_PATH, "-o", "jobs", "--job-name", "far", "-i", "hello-file",
    )  # fmt: skip
    job = read_job(tmp_path / "jobs" / "far")
    assert job.lock_created_at is not None
    assert zone_offset(job.started_at, job.lock_created_at).total_seconds() == 5 * 3600 + 45 * 60  # type: ignore[union-attr]
    assert consistency_problems(job) == []


def _trial(job: Path, task: str) -> Path:
    return next(p for p in sorted(job.iterdir()) if p.name.startswith(f"{task}__"))


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=4))


def _codes(job: Path) -> list[str]:
    return [p.code for p in consistency_problems(read_job(job))]


def _pass_prime_factor(result: dict[str, Any]) -> None:
    result["verifier_result"]["rewards"]["reward"] = 1.0


def test_a_reward_edited_in_result_json_alone_is_named(oracle_job: Path, copy_job: CopyJob) -> None:
    job = copy_job(oracle_job)
    trial = _trial(job, "prime-factor")
    _edit(trial / "result.json", _pass_prime_factor)
    problems = consistency_problems(read_job(job))
    mismatch = [p for p in problems if p.code == "trial-reward-mismatch"]
    assert len(mismatch) == 1
    assert f"{trial.name}/verifier/reward.txt gives reward 0" in mismatch[0].message
    assert "records reward 1" in mismatch[0].message
    # The job's aggregates still say what the verifier said.
    assert "job-result-mismatch" in {p.code for p in problems}


def test_a_reward_edited_in_both_trial_files_disagrees_with_the_job_result(
    oracle_job: Path, copy_job: CopyJob
) -> None:
    job = copy_job(oracle_job)
    trial = _trial(job, "prime-factor")
    _edit(trial / "result.json", _pass_prime_factor)
    (trial / "verifier" / "reward.txt").write_text("1\n")
    problems = consistency_problems(read_job(job))
    assert {p.code for p in problems} == {"job-result-mismatch"}
    fields = " ".join(p.message for p in problems)
    assert "metrics[0].mean" in fields and "reward_stats" in fields


def test_a_consistent_edit_of_every_copy_is_beyond_these_checks(
    oracle_job: Path, copy_job: CopyJob
) -> None:
    """What only regrading catches: the same forged reward in all three files."""
    job = copy_job(oracle_job)
    for trial in sorted(job.glob("prime-factor__*")):
        _edit(trial / "result.json", _pass_prime_factor)
        (trial / "verifier" / "reward.txt").write_text("1\n")

    def forge(result: dict[str, Any]) -> None:
        group = next(iter(result["stats"]["evals"].values()))
        group["metrics"] = [{"mean": 1.0}]
        group["reward_stats"] = {"reward": {"1.0": [p.name for p in job.iterdir() if p.is_dir()]}}
        group["pass_at_k"] = {"2": 1.0}

    _edit(job / "result.json", forge)
    assert _codes(job) == []


def test_a_reward_file_that_says_nothing_is_named(oracle_job: Path, copy_job: CopyJob) -> None:
    job = copy_job(oracle_job)
    trial = _trial(job, "hello-file")
    (trial / "verifier" / "reward.txt").unlink()
    assert _codes(job) == ["trial-reward-mismatch"]
    (trial / "verifier" / "reward.json").write_text('{"reward": "1"}')
    assert _codes(job) == ["trial-reward-mismatch"]
    (trial / "verifier" / "reward.json").write_text('{"reward": 1}')
    assert _codes(job) == []


def test_a_trial_time_outside_the_job_is_named(oracle_job: Path, copy_job: CopyJob) -> None:
    job = copy_job(oracle_job)
    trial = _trial(job, "hello-file")
    _edit(trial / "result.json", lambda r: r.update(started_at="2020-01-01T00:00:00Z"))
    problems = consistency_problems(read_job(job))
    assert [p.code for p in problems] == ["trial-time-outside-job"]
    assert "outside the job's run" in problems[0].message
    shutil.copy(_trial(oracle_job, "hello-file") / "result.json", trial / "result.json")
    _edit(trial / "result.json", lambda r: r["verifier"].update(finished_at="2099-01-01T00:00:00Z"))
    problems = consistency_problems(read_job(job))
    assert [p.code for p in problems] == ["trial-time-outside-job"]
    assert "phases outside the trial's own times" in problems[0].message


def test_a_dropped_trial_with_its_counts_edited_disagrees_with_the_lock(
    oracle_job: Path, copy_job: CopyJob
) -> None:
    job = copy_job(oracle_job)
    shutil.rmtree(_trial(job, "prime-factor"))

    def fewer(result: dict[str, Any]) -> None:
        result["n_total_trials"] -= 1
        result["stats"]["n_completed_trials"] -= 1

    _edit(job / "result.json", fewer)
    codes = _codes(job)
    assert "job-plan-mismatch" in codes
    assert "job-result-mismatch" in codes


def test_an_added_trial_disagrees_with_the_lock(oracle_job: Path, copy_job: CopyJob) -> None:
    job = copy_job(oracle_job)
    source = _trial(job, "hello-file")
    shutil.copytree(source, job / "hello-file__added1")
    assert "job-plan-mismatch" in _codes(job)


def test_a_trial_of_other_task_files_disagrees_with_the_job_lock(
    oracle_job: Path, copy_job: CopyJob
) -> None:
    job = copy_job(oracle_job)
    trial = _trial(job, "sum-numbers")
    _edit(trial / "lock.json", lambda lock: lock["task"].update(digest="sha256:" + "0" * 64))
    problems = consistency_problems(read_job(job))
    assert [p.code for p in problems] == ["task-digest-inconsistent"]
    assert trial.name in problems[0].message
