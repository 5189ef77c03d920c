"""The check tables on a real job's evidence, and on that evidence changed one part at a time."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from app.checks import store_checks
from app.checks.board_checks import BOARD_CHECKS
from app.checks.evidence import Evidence, IssuedSpec
from app.checks.store_checks import CHECKS, STORE_CHECKS, Checked
from app.checks.table import MAX_PROBLEMS_PER_CHECK, Check, Outcome, Report, failed, run_table
from hbench.codes import CODES, named
from hbench.digest import spec_digest
from hbench.errors import Problem
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS, JobConfig, RetrySettings
from hbench.jobs.models import LoggedRetry
from registry.placement import Placement
from tests.app.bench.jobs import SealedJob

CHECK_INDEX = {check.name: index for index, check in enumerate(CHECKS)}


def check_job(evidence: Evidence) -> Checked:
    """Both tables, with every failure held to the codes its check's entry names."""
    checked = store_checks.check_job(evidence)
    assert checked.store.unnamed(STORE_CHECKS) == []
    assert checked.boards.unnamed(BOARD_CHECKS) == []
    return checked


def statuses(report: Report | Checked) -> dict[str, str]:
    return {result.check: result.outcome.status for result in report.results}


def codes(report: Report | Checked) -> list[str]:
    """Why the job can't be stored: the store rules' failures."""
    return [problem.code for problem in report.problems]


def notes(checked: Checked) -> list[str]:
    """Why the stored job fits no board: the board rules' failures."""
    return [problem.code for problem in checked.board_notes]


def with_config(evidence: Evidence, **changes: Any) -> Evidence:
    """The evidence of the same job, had its config held these settings."""
    job = evidence.job
    assert job is not None
    config = job.config.model_copy(update=changes)
    return dataclasses.replace(evidence, job=job.model_copy(update={"config": config}))


def with_job(evidence: Evidence, **changes: Any) -> Evidence:
    job = evidence.job
    assert job is not None
    return dataclasses.replace(evidence, job=job.model_copy(update=changes))


def issued(sealed: SealedJob, **spec_changes: Any) -> IssuedSpec:
    spec = {**sealed.spec, **spec_changes}
    return IssuedSpec("run-1", spec, spec_digest(spec), "hbench-demo", "oracle-a1b2c3")


def test_a_real_job_passes_every_rule_that_applies(evidence: Evidence) -> None:
    report = check_job(evidence)

    assert report.accepted
    assert [result.check for result in report.results] == [check.name for check in CHECKS]
    assert statuses(report) == {
        **{check.name: "passed" for check in CHECKS},
        "prompt-as-issued": "skipped",
        "spec-matches": "skipped",
        "spec-digest-matches": "skipped",
    }
    assert notes(report) == []


def test_every_entry_names_its_codes_from_the_catalogue() -> None:
    assert [check.name for check in CHECKS] == [check.name for check in STORE_CHECKS + BOARD_CHECKS]
    assert len({check.name for check in CHECKS}) == len(CHECKS)
    for check in CHECKS:
        assert check.codes, check.name
        assert all(CODES[code.code] is code for code in check.codes), check.name


def test_a_failure_with_a_code_its_entry_does_not_name_is_found(evidence: Evidence) -> None:
    def check(_: Evidence) -> Outcome:
        return failed([Problem("job-unfinished", "a code the entry does not name")])

    loose = Check("loose", "Gives a code it does not name", check, named("job-incomplete"))

    assert run_table([loose], evidence).unnamed([loose]) == [("loose", "job-unfinished")]


def test_an_empty_check_table_is_an_error(evidence: Evidence) -> None:
    with pytest.raises(ValueError, match="an empty check table checks nothing"):
        run_table([], evidence)


def test_what_can_not_be_read_fails_its_rule_and_skips_the_rules_that_need_it() -> None:
    unreadable = Problem("job-json-invalid", "result.json is not valid JSON")
    evidence = Evidence(observed={}, min_hbench_version="0.3.0", job_problems=(unreadable,))

    report = check_job(evidence)

    assert codes(report) == ["manifest-missing", "job-json-invalid"]
    assert statuses(report)["manifest-present"] == "failed"
    assert statuses(report)["job-readable"] == "failed"
    assert {statuses(report)[rule] for rule in ("manifest-matches-bytes", "one-agent")} == {
        "skipped"
    }


def test_a_rule_names_twenty_failures_then_counts_the_rest(evidence: Evidence) -> None:
    extra = {f"added/{n:02}.txt": (1, "0" * 64) for n in range(30)}
    changed = dataclasses.replace(evidence, observed={**evidence.observed, **extra})

    problems = check_job(changed).problems

    assert codes(check_job(changed)) == ["manifest-file-extra"] * (MAX_PROBLEMS_PER_CHECK + 1)
    assert problems[0].path == "added/00.txt"
    assert problems[-1].message == "and 10 more problems of this kind"


def test_the_policys_minimum_hbench_version_applies(evidence: Evidence) -> None:
    report = check_job(dataclasses.replace(evidence, min_hbench_version="9.0.0"))

    assert codes(report) == ["hbench-version-too-old"]
    assert "hbench 9.0.0 or later" in report.problems[0].message


def test_a_job_with_no_trial_is_refused(evidence: Evidence) -> None:
    empty = with_job(evidence, trials=(), n_total_trials=0)

    found = codes(check_job(empty))
    assert found[0] == "job-no-trials"
    # Emptied by hand, the job also disagrees with its own lock.json and totals.
    assert set(found[1:]) == {"job-plan-mismatch", "job-result-mismatch"}


@pytest.mark.parametrize(
    ("retry", "code_count"),
    [
        (RetrySettings(max_retries=2), 0),
        # Nothing is retried without max_retries, whatever the lists say.
        (RetrySettings(max_retries=0, exclude_exceptions=frozenset()), 0),
        # Adding exclusions retries less: allowed.
        (RetrySettings(max_retries=2, exclude_exceptions=DEFAULT_RETRY_EXCLUSIONS | {"X"}), 0),
        (RetrySettings(max_retries=2, exclude_exceptions=None), 1),
        (RetrySettings(max_retries=2, exclude_exceptions=frozenset({"AgentTimeoutError"})), 1),
        (RetrySettings(max_retries=2, include_exceptions=frozenset({"RuntimeError"})), 1),
        (
            RetrySettings(
                max_retries=1,
                exclude_exceptions=frozenset(),
                include_exceptions=frozenset({"AgentTimeoutError"}),
            ),
            2,
        ),
    ],
)
def test_retries_keep_harbors_exclusions_and_add_no_list(
    evidence: Evidence, retry: RetrySettings, code_count: int
) -> None:
    report = check_job(with_config(evidence, retry=retry))

    assert codes(report) == ["job-retries-not-crashes"] * code_count


def test_a_logged_retry_of_a_crash_passes_and_of_a_timeout_fails(evidence: Evidence) -> None:
    crash = LoggedRetry(trial_name="hello-file__abc", exception_type="FlakyAgentError")
    timeout = LoggedRetry(trial_name="sum-numbers__def", exception_type="AgentTimeoutError")

    crashed = check_job(with_job(evidence, logged_retries=(crash,)))
    timed_out = check_job(with_job(evidence, logged_retries=(crash, timeout)))

    assert crashed.accepted
    assert crashed.results[CHECK_INDEX["retries-only-crashes"]].outcome.note == (
        "1 retries, each of a crash"
    )
    assert codes(timed_out) == ["job-retries-not-crashes"]
    assert "sum-numbers__def" in timed_out.problems[0].message
    assert timed_out.problems[0].path == "job.log"


def test_several_agents_or_models_are_refused_each_by_its_check(evidence: Evidence) -> None:
    two_agents = JobConfig.model_validate({"agents": [{"name": "oracle"}, {"name": "nop"}]})
    twice = JobConfig.model_validate({"agents": [{"name": "nop"}, {"name": "nop"}]})
    two_models = JobConfig.model_validate(
        {"agents": [{"name": "nop", "model_name": "a/x"}, {"name": "nop", "model_name": "b/y"}]}
    )

    # Each config was edited by hand, so its lock.json, made for one agent, disagrees too.
    assert codes(check_job(with_config(evidence, agents=two_agents.agents))) == [
        "job-several-agents",
        "job-plan-mismatch",
    ]
    assert codes(check_job(with_config(evidence, agents=twice.agents))) == [
        "job-several-agents",
        "job-plan-mismatch",
    ]
    assert codes(check_job(with_config(evidence, agents=two_models.agents))) == [
        "job-several-models",
        "job-plan-mismatch",
    ]


def test_a_dataset_and_tasks_of_their_own_are_two_sets_of_tasks(evidence: Evidence) -> None:
    config = JobConfig.model_validate({"tasks": [{"path": "/srv/task"}]})

    report = check_job(with_config(evidence, tasks=config.tasks))

    assert codes(report) == ["job-several-datasets"]


@pytest.mark.parametrize("attempts", [0, 6, 10])
def test_attempts_outside_one_to_five_are_refused(evidence: Evidence, attempts: int) -> None:
    report = check_job(with_config(evidence, n_attempts=attempts))

    assert "job-attempts-out-of-range" in codes(report)


def test_a_prompt_keeps_a_self_reported_job_off_the_boards_and_an_issued_run_to_its_spec(
    evidence: Evidence, sealed: SealedJob
) -> None:
    agents = [{"name": "oracle", "kwargs": {"prompt_template_path": "prompt.j2"}}]
    prompted = with_config(evidence, agents=JobConfig.model_validate({"agents": agents}).agents)

    self_reported = check_job(prompted)
    issued_without = check_job(dataclasses.replace(prompted, issued=issued(sealed)))
    issued_with = check_job(dataclasses.replace(prompted, issued=issued(sealed, agents=agents)))

    # Kept, on no board: the prompt is a board check's failure, a note.
    assert self_reported.accepted
    assert notes(self_reported) == ["job-prompt-not-issued"]
    assert "only an issued run may use them" in self_reported.board_notes[0].message
    assert statuses(self_reported)["prompt-needs-issued-run"] == "failed"
    assert statuses(self_reported)["prompt-as-issued"] == "skipped"
    # An issued run must be its spec: a prompt it was issued without is refused.
    assert codes(issued_without)[0] == "job-prompt-not-issued"
    assert "local-spec-mismatch" in codes(issued_without)
    assert "was issued without them" in issued_without.problems[0].message
    assert statuses(issued_without)["prompt-needs-issued-run"] == "skipped"
    assert not {"job-prompt-not-issued", "local-spec-mismatch"} & set(codes(issued_with))
    assert notes(issued_with) == []


def test_extra_instructions_count_as_a_prompt(evidence: Evidence) -> None:
    report = check_job(with_config(evidence, extra_instructions=["Be terse.", "Be kind."]))

    assert report.accepted
    assert notes(report) == ["job-prompt-not-issued"]
    assert "2 extra instructions" in report.board_notes[0].message


def test_an_environment_no_board_allows_is_a_note_and_an_issued_run_runs_its_spec(
    evidence: Evidence, sealed: SealedJob
) -> None:
    refusal = Problem("board-environment-refused", "the environment x:Y is allowed elsewhere")
    refused = dataclasses.replace(
        evidence, placement=Placement(problems=(refusal,)), board_notes=(refusal,)
    )

    kept = check_job(refused)
    assert kept.accepted
    assert notes(kept) == ["board-environment-refused"]
    assert statuses(kept)["board-cell"] == "skipped"
    as_issued = dataclasses.replace(refused, placement=None, board_notes=(), issued=issued(sealed))
    assert check_job(as_issued).accepted and notes(check_job(as_issued)) == []


def test_tasks_from_a_folder_are_kept_on_no_board(evidence: Evidence) -> None:
    local = Problem("board-local-tasks", "the job ran tasks from a folder")
    folder = JobConfig.model_validate({"datasets": [{"path": "/srv/tasks"}]}).datasets
    placed = dataclasses.replace(evidence, board_notes=(local,))

    report = check_job(with_config(placed, datasets=folder))

    assert report.accepted
    assert notes(report) == ["board-local-tasks"]
    assert "stays private on Your bench" in report.board_notes[0].message


def test_what_else_placement_finds_is_the_board_cell_rules_note(evidence: Evidence) -> None:
    other_files = Problem("task-digest-mismatch", "other task files than the board's")

    report = check_job(dataclasses.replace(evidence, board_notes=(other_files,)))

    assert report.accepted
    assert notes(report) == ["task-digest-mismatch"]
    assert statuses(report)["board-cell"] == "failed"


def test_an_issued_run_matches_its_spec_and_its_digest(
    evidence: Evidence, sealed: SealedJob
) -> None:
    report = check_job(dataclasses.replace(evidence, issued=issued(sealed)))

    assert report.accepted
    assert statuses(report)["spec-matches"] == statuses(report)["spec-digest-matches"] == "passed"


def test_an_issued_run_of_another_spec_fails_both_spec_rules(
    evidence: Evidence, sealed: SealedJob
) -> None:
    report = check_job(dataclasses.replace(evidence, issued=issued(sealed, n_attempts=3)))

    assert codes(report) == ["local-spec-mismatch", "run-spec-digest-mismatch"]
    assert report.problems[0].path == "config.json:n_attempts"
    assert "n_attempts is 2 in the job, 3 in the spec" in report.problems[0].message


def test_a_table_naming_a_code_the_catalogue_lacks_fails_where_it_is_made() -> None:
    with pytest.raises(ValueError, match=r"unknown rule codes \['job-not-a-code'\]"):
        named("job-incomplete", "job-not-a-code")
