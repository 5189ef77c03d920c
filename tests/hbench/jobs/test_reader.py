"""`read_job` and `completeness_problems` on real Harbor jobs: plain, errored, retried,
resumed, interrupted, and damaged or foreign folders."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hbench.errors import HbenchError
from hbench.jobs.completeness import completeness_problems, require_complete
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS
from hbench.jobs.models import Job
from hbench.jobs.reader import cut_off_trials, read_job
from hbench.sandbox import IMPORT_PATH
from tests.data import agents
from tests.hbench.jobs.conftest import resume

pytestmark = pytest.mark.harbor

CopyJob = Callable[[Path], Path]


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def reported_eval(job: Path) -> dict[str, Any]:
    """Harbor's own figures for the job's only evals group."""
    (figures,) = load(job / "result.json")["stats"]["evals"].values()
    return dict(figures)


def codes(job: Job) -> list[str]:
    return [problem.code for problem in completeness_problems(job)]


def refusal(path: Path) -> HbenchError:
    with pytest.raises(HbenchError) as raised:
        read_job(path)
    return raised.value


def a_trial(job_dir: Path, task: str = "hello-file") -> Path:
    return next(job_dir.glob(f"{task}__*"))


# Plain runs


def test_oracle_job_reads_as_harbor_wrote_it(oracle_job: Path) -> None:
    job = read_job(oracle_job)
    result, config = load(oracle_job / "result.json"), load(oracle_job / "config.json")

    assert job.job_id == result["id"] and job.job_name == "oracle-k2"
    assert job.harbor_version == load(oracle_job / "lock.json")["harbor"]["version"] == "0.25.0"
    assert job.finished and job.n_total_trials == 10 and job.n_locked_trials == 10
    # config.json leaves defaults out; the reader puts Harbor's back.
    assert "agents" not in config and "retry" not in config
    assert job.agent_names == ["oracle"] and job.model_names == []
    assert job.retry.max_retries == 0 and job.retry.exclude_exceptions == DEFAULT_RETRY_EXCLUSIONS
    assert job.environment.import_path == IMPORT_PATH and job.environment.type is None
    assert job.dataset_refs == ["hbench-demo@1.0"] and job.n_attempts == 2
    assert job.timeout_multipliers == dict.fromkeys(
        ["agent", "verifier", "agent_setup", "environment_build"], 1.0
    )
    assert completeness_problems(job) == []
    assert require_complete(job) is job


def test_oracle_job_trials_carry_rewards_timings_and_digests(oracle_job: Path) -> None:
    job = read_job(oracle_job)

    assert len(job.trials) == 10 and all(
        t.has_result and t.job_id == job.job_id for t in job.trials
    )
    by_task: dict[str, list[int]] = defaultdict(list)
    for trial in job.trials:
        by_task[trial.task_name or ""].append(trial.attempt or 0)
        lock = load(trial.path / "lock.json")
        assert trial.task_digest == lock["task"]["digest"]
        assert trial.reward == (0.0 if trial.task_name == "prime-factor" else 1.0)
        assert trial.rewards == {"reward": trial.reward}
        assert trial.agent_name == "oracle" and trial.agent_version == "1.0.0"
        assert trial.source == "hbench-demo" and trial.exception_type is None
        assert trial.started_at and trial.finished_at and trial.started_at < trial.finished_at
        for phase in (trial.environment_setup, trial.agent_execution, trial.verifier):
            assert phase is not None and (phase.seconds or 0) >= 0
        assert trial.n_input_tokens is None and trial.cost_usd is None
    assert by_task == {task: [1, 2] for task in by_task} and len(by_task) == 5
    for first, second in zip(job.trials[::2], job.trials[1::2], strict=True):
        assert first.task_name == second.task_name
        assert first.started_at and second.started_at and first.started_at <= second.started_at


def test_oracle_job_scores_as_harbor_scored_it(oracle_job: Path) -> None:
    job = read_job(oracle_job)
    figures = reported_eval(oracle_job)

    assert job.score == pytest.approx(0.8) == figures["metrics"][0]["mean"]
    assert job.pass_at_k == {2: pytest.approx(0.8)}
    assert {int(k): v for k, v in figures["pass_at_k"].items()} == pytest.approx(job.pass_at_k)
    (group,) = job.evals.values()
    assert group.key == "oracle__hbench-demo" and group.metrics == {"mean": pytest.approx(0.8)}
    assert job.n_input_tokens is None and job.cost_usd is None


def test_nop_job_scores_zero_and_reports_no_pass_at_1(nop_job: Path) -> None:
    job = read_job(nop_job)

    assert job.agent_names == ["nop"] and {t.agent_name for t in job.trials} == {"nop"}
    assert job.score == 0.0 == reported_eval(nop_job)["metrics"][0]["mean"]
    # One attempt per task: Harbor never reports pass@1, and neither do we.
    assert job.pass_at_k == {} and reported_eval(nop_job)["pass_at_k"] == {}
    assert all(t.attempt == 1 for t in job.trials)


def test_models_are_read_from_config_and_from_each_trial(models_job: Path) -> None:
    job = read_job(models_job)

    assert job.model_names == ["anthropic/claude-sonnet-4-5", "gpt-5"]
    assert job.agent_names == ["nop"] and len(job.agents) == 2
    claude = [t for t in job.trials if t.model_name == "claude-sonnet-4-5"]
    assert len(claude) == 5 and {t.model for t in claude} == {"anthropic/claude-sonnet-4-5"}
    # Harbor maps a bare model name to its provider: `gpt-5` runs as `openai/gpt-5`.
    assert {t.model for t in job.trials} == {"anthropic/claude-sonnet-4-5", "openai/gpt-5"}
    reported = load(models_job / "result.json")["stats"]["evals"]
    assert sorted(job.evals) == sorted(reported) == [
        "nop__claude-sonnet-4-5__hbench-demo", "nop__gpt-5__hbench-demo",
    ]  # fmt: skip
    # One attempt per task in each group; pass@k is Harbor's per group, never across models.
    assert all(t.attempt == 1 for t in job.trials) and job.pass_at_k == {}
    assert completeness_problems(job) == []


# Errors and retries


def test_errored_trials_count_as_zero_in_the_mean_and_pass_at_k(errored_job: Path) -> None:
    job = read_job(errored_job)
    figures = reported_eval(errored_job)

    errored = [t for t in job.trials if t.errored]
    assert len(errored) == 5 == figures["n_errors"]
    assert {t.exception_type for t in errored} == {"FlakyAgentError"}
    assert all(t.rewards is None and t.reward is None for t in errored)
    assert all("crashes on purpose" in (t.exception_message or "") for t in errored)
    # 4 passes out of 10 trials: the errored five count as 0, not as absent.
    assert job.score == pytest.approx(0.4) == figures["metrics"][0]["mean"]
    assert job.pass_at_k == {2: pytest.approx(0.8)}
    assert {int(k): v for k, v in figures["pass_at_k"].items()} == pytest.approx(job.pass_at_k)
    (group,) = job.evals.values()
    assert group.n_errors == 5 and group.n_trials == 10
    # Every trial is still a result: an errored trial is complete, not missing.
    assert completeness_problems(job) == []


def test_token_and_cost_totals_match_harbors(errored_job: Path) -> None:
    job = read_job(errored_job)
    stats = load(errored_job / "result.json")["stats"]

    assert all(t.n_input_tokens == agents.INPUT_TOKENS for t in job.trials)
    assert job.n_input_tokens == stats["n_input_tokens"] == 10 * agents.INPUT_TOKENS
    assert job.n_cache_tokens == stats["n_cache_tokens"] == 10 * agents.CACHE_TOKENS
    assert job.n_output_tokens == stats["n_output_tokens"] == 10 * agents.OUTPUT_TOKENS
    assert job.cost_usd == pytest.approx(stats["cost_usd"]) == pytest.approx(10 * agents.COST_USD)


def test_retried_job_keeps_only_the_last_attempt(retried_job: Path) -> None:
    job = read_job(retried_job)

    assert job.retry.max_retries == 1 and job.n_retries == 5
    assert job.retry.retries("FlakyAgentError") and not job.retry.retries("AgentTimeoutError")
    # job.log is the only record of what each retry reran.
    assert sorted(r.trial_name for r in job.logged_retries) == [t.trial_name for t in job.trials]
    assert {r.exception_type for r in job.logged_retries} == {"FlakyAgentError"}
    # Harbor deletes a failed attempt before retrying it under the same name.
    assert len(job.trials) == 5 and not any(t.errored for t in job.trials)
    assert all(t.attempt == 1 for t in job.trials)
    assert job.score == pytest.approx(0.8) == reported_eval(retried_job)["metrics"][0]["mean"]
    assert job.agent_names == ["tests.data.agents:FlakyAgent"]
    assert job.agents[0].custom_class == "tests.data.agents:FlakyAgent"
    assert {t.agent_name for t in job.trials} == {"flaky"}
    assert completeness_problems(job) == []


def test_retries_that_fail_again_leave_errored_trials(broken_job: Path) -> None:
    job = read_job(broken_job)

    assert job.n_retries == 5 == len(job.logged_retries) and len(job.trials) == 5
    assert {t.exception_type for t in job.trials} == {"BrokenAgentError"}
    assert {r.exception_type for r in job.logged_retries} == {"BrokenAgentError"}
    assert job.score == 0.0 == reported_eval(broken_job)["metrics"][0]["mean"]
    assert job.pass_at_k == {} and list(job.evals) == ["broken__hbench-demo"]
    assert completeness_problems(job) == []


def test_agent_timeout_is_graded_and_never_retried(timeout_job: Path) -> None:
    job = read_job(timeout_job)

    (trial,) = job.trials
    assert trial.exception_type == "AgentTimeoutError" and trial.errored
    # Harbor still runs the verifier after an agent timeout.
    assert trial.rewards == {"reward": 0.0} and trial.reward == 0.0
    assert job.retry.max_retries == 1 and job.n_retries == 0 and job.logged_retries == ()
    assert job.timeout_multipliers["agent"] == 0.02 and job.timeout_multipliers["verifier"] == 1.0
    assert job.datasets[0].task_names == ["hello-file"] and job.datasets[0].filtered
    assert job.n_total_trials == 1 and completeness_problems(job) == []


# Interrupted and resumed jobs


def test_ctrl_c_leaves_cancelled_trials_and_an_unfinished_job(cancelled_job: Path) -> None:
    job = read_job(cancelled_job)

    assert not job.finished and job.n_total_trials == 5
    assert [t.exception_type for t in job.trials] == ["CancelledError"] * 2
    assert codes(job) == ["job-unfinished", "trial-cancelled", "trial-cancelled", "job-incomplete"]
    with pytest.raises(HbenchError) as raised:
        require_complete(job)
    assert [p.code for p in raised.value.problems] == codes(job)
    incomplete = completeness_problems(job)[-1]
    assert "2 of the 5 planned trials" in incomplete.message
    assert f"hbench jobs resume -p {cancelled_job}" in incomplete.message


def test_killed_run_leaves_trials_without_a_result(killed_job: Path) -> None:
    job = read_job(killed_job)

    assert not job.finished and len(job.trials) == 2
    for trial in job.trials:
        assert not trial.has_result and trial.attempt is None and trial.rewards is None
        # What the trial's own config and lock say is still read.
        assert trial.job_id == job.job_id and trial.task_digest
        assert (trial.task_name or "?") in trial.trial_name
    assert job.results == () and job.score == 0.0
    assert codes(job) == [
        "job-unfinished", "trial-result-missing", "trial-result-missing", "job-incomplete",
    ]  # fmt: skip
    missing = completeness_problems(job)[1]
    assert missing.path == str(job.trials[0].path) and job.trials[0].trial_name in missing.message


def test_resume_reruns_a_trial_whose_result_is_gone(nop_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(nop_job)
    lost = a_trial(job_dir)
    (lost / "result.json").unlink()
    before = read_job(job_dir)
    assert before.finished and codes(before) == ["trial-result-missing", "job-incomplete"]

    resume(job_dir)

    after = read_job(job_dir)
    assert not lost.exists() and len(after.trials) == 5 and completeness_problems(after) == []
    assert after.job_id == before.job_id and after.started_at == before.started_at
    rerun = next(t for t in after.trials if t.task_name == "hello-file")
    assert rerun.trial_name != lost.name and rerun.attempt == 1


def test_resume_with_a_filter_reruns_crashed_trials(errored_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(errored_job)
    before = read_job(job_dir)
    crashed = {t.trial_name for t in before.trials if t.exception_type == "FlakyAgentError"}
    assert len(crashed) == 5 and before.score == pytest.approx(0.4)

    resume(job_dir, "-f", "FlakyAgentError")

    after = read_job(job_dir)
    assert after.job_id == before.job_id and len(after.trials) == 10
    assert not any(t.errored for t in after.trials) and completeness_problems(after) == []
    # Harbor deleted the crashed trials and ran them again under new names.
    assert crashed.isdisjoint(t.trial_name for t in after.trials)
    assert after.score == pytest.approx(0.8) == reported_eval(job_dir)["metrics"][0]["mean"]
    assert after.pass_at_k == {2: pytest.approx(0.8)}
    # Nothing in the folder shows the crashes any more: a resume is not a retry.
    assert after.n_retries == 0


# Damaged and foreign folders


def test_a_missing_path_or_a_file_is_not_found(tmp_path: Path) -> None:
    assert refusal(tmp_path / "nowhere").code == "job-not-found"
    archive = tmp_path / "job.tgz"
    archive.write_bytes(b"\x1f\x8b")
    error = refusal(archive)
    assert error.code == "job-not-found" and "unpack" in error.detail


def test_a_foreign_folder_is_not_a_harbor_job(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    error = refusal(tmp_path)
    assert error.code == "job-not-harbor" and "no config.json" in error.detail


def test_the_jobs_folder_and_a_trial_folder_are_pointed_to_the_job(
    oracle_job: Path, copy_job: CopyJob
) -> None:
    job_dir = copy_job(oracle_job)
    above = refusal(job_dir.parent)
    assert above.code == "job-not-harbor" and str(job_dir) in above.detail
    trial = refusal(a_trial(job_dir))
    assert trial.code == "job-not-harbor" and f"Pass the job's folder: {job_dir}" in trial.detail


def test_a_job_without_result_json(nop_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(nop_job)
    (job_dir / "result.json").unlink()
    error = refusal(job_dir)
    assert error.code == "job-result-missing" and "hbench jobs resume" in error.detail


def test_a_foreign_result_json_is_not_a_harbor_job(nop_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(nop_job)
    (job_dir / "result.json").write_text('{"accuracy": 0.9}')
    assert refusal(job_dir).code == "job-not-harbor"


def test_every_invalid_file_is_named_at_once(nop_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(nop_job)
    (job_dir / "config.json").write_text("{not json")
    trial = a_trial(job_dir)
    (trial / "result.json").write_text('{"id": "x"')
    result = load(job_dir / "result.json")
    result["n_total_trials"] = "many"
    (job_dir / "result.json").write_text(json.dumps(result))

    error = refusal(job_dir)
    assert [p.code for p in error.problems] == ["job-json-invalid"] * 3
    paths = {p.path for p in error.problems}
    assert paths == {str(job_dir / n) for n in ("config.json", "result.json")} | {
        str(trial / "result.json")
    }
    by_path = {p.path: p.message for p in error.problems}
    assert "`n_total_trials`" in by_path[str(job_dir / "result.json")]
    assert f"which deletes the folder {trial}" in by_path[str(trial / "result.json")]
    assert cut_off_trials(job_dir) == [trial]


def test_a_trial_result_of_another_shape_is_left_for_its_owner_to_delete(
    nop_job: Path, copy_job: CopyJob
) -> None:
    job_dir = copy_job(nop_job)
    trial = a_trial(job_dir)
    (trial / "result.json").write_text('{"id": 7}')

    (problem,) = refusal(job_dir).problems
    assert problem.code == "job-json-invalid" and "does not have Harbor's shape" in problem.message
    assert f"delete the folder {trial} and continue the job" in problem.message
    # JSON, so not cut off by a stop: resuming leaves it where it is.
    assert cut_off_trials(job_dir) == []


def test_a_sealed_jobs_damaged_trial_is_not_sent_to_resume(
    nop_job: Path, copy_job: CopyJob
) -> None:
    """Resuming can't redo a trial a seal holds, so the fix offered is to restore or rerun."""
    job_dir = copy_job(nop_job)
    (job_dir / "manifest.json").write_text("{}")
    trial = a_trial(job_dir)
    (trial / "result.json").write_text('{"id": "x"')

    (problem,) = refusal(job_dir).problems
    assert problem.code == "job-json-invalid"
    assert "changed after the job was sealed" in problem.message
    assert "resume" not in problem.message


def test_a_trial_from_another_job_is_caught(
    nop_job: Path, errored_job: Path, copy_job: CopyJob
) -> None:
    job_dir = copy_job(nop_job)
    stranger = a_trial(errored_job, "sum-numbers")
    shutil.copytree(stranger, job_dir / stranger.name)

    job = read_job(job_dir)
    assert codes(job) == ["trial-job-mismatch", "job-trials-extra"]
    mismatch = completeness_problems(job)[0]
    assert stranger.name in mismatch.message and mismatch.path == str(job_dir / stranger.name)


def test_extra_attempts_of_a_task_are_caught(nop_job: Path, copy_job: CopyJob) -> None:
    job_dir = copy_job(nop_job)
    shutil.copytree(a_trial(job_dir), job_dir / "hello-file__copy123")

    job = read_job(job_dir)
    assert codes(job) == ["job-trials-extra"]
    assert (
        "hello-file (nop__hbench-demo) has 2 attempts, 1 planned"
        in completeness_problems(job)[0].message
    )


def nulled(value: Any) -> Any:
    return dict.fromkeys(value) if isinstance(value, dict) else None


CORRUPTIONS: dict[str, Callable[[str], str]] = {
    "truncated": lambda text: text[: len(text) // 2],
    "empty": lambda _text: "",
    "a list": lambda _text: "[]",
    "null": lambda _text: "null",
    "not utf-8": lambda _text: "\udcff",
    "fields nulled": lambda text: json.dumps(nulled(json.loads(text))),
}


# Damage a file that hbench reads can't go unnoticed; other JSON files are not read at all.
UNREADABLE = {"truncated", "empty", "a list", "not utf-8"}
READ_FILES = {"config.json", "result.json", "lock.json"}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_any_damaged_json_file_is_refused_with_a_code(
    errored_job: Path, copy_job: CopyJob, corruption: str
) -> None:
    job_dir = copy_job(errored_job)
    for path in sorted(job_dir.rglob("*.json")):
        text = path.read_text()
        path.write_bytes(CORRUPTIONS[corruption](text).encode("utf-8", "surrogateescape"))
        try:
            read_job(job_dir)
        except HbenchError as error:
            assert error.code in {"job-json-invalid", "job-not-harbor"}, error.detail
            assert all(p.detail.endswith(f"({p.code})") for p in error.problems)
        else:
            read = path.name in READ_FILES and len(path.relative_to(job_dir).parts) <= 2
            assert not (read and corruption in UNREADABLE), f"{corruption} {path} went unnoticed"
        path.write_text(text)
