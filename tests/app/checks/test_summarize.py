"""The stored summary of an accepted job, and the fingerprint that outlives it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.checks.boards import Boards
from app.checks.evidence import Evidence, IssuedSpec
from app.checks.summarize import fingerprint, job_summary
from app.db.summary import SUMMARY_FORMAT, JobSummary, KeptSummary, SummaryCi, UploadSize
from hbench.jobs.models import Job
from registry.datarepo.models import RunUsage
from registry.placement import EntrySettings, JobFacts

SIZE = UploadSize(compressed_bytes=10_000, unpacked_bytes=80_000, files=44)


def summary_of(
    evidence: Evidence, boards: Boards, issued: IssuedSpec | None = None
) -> dict[str, Any]:
    assert evidence.job is not None and evidence.manifest is not None
    return job_summary(evidence.job, evidence.manifest, boards, issued, SIZE).stored()


def test_the_summary_holds_what_your_bench_and_publishing_read(
    gathered: tuple[Evidence, Boards], job: Job
) -> None:
    evidence, boards = gathered
    assert evidence.manifest is not None

    summary = summary_of(evidence, boards)

    assert json.loads(json.dumps(summary)) == summary  # stored as JSON, as it is
    assert summary["format"] == SUMMARY_FORMAT
    assert summary["job_id"] == job.job_id
    assert summary["dataset"] == "hbench-demo@1.0"
    assert summary["model"] is None and summary["n_attempts"] == 2
    assert summary["score"] == 0.8
    assert summary["pass_at_k"] == {str(k): v for k, v in job.pass_at_k.items()}
    assert summary["results"] == {
        "count-lines": [1.0, 1.0],
        "hello-file": [1.0, 1.0],
        "prime-factor": [0.0, 0.0],
        "reverse-words": [1.0, 1.0],
        "sum-numbers": [1.0, 1.0],
    }
    assert RunUsage.model_validate(summary["usage"]) == RunUsage()
    assert summary["manifest_digest"] == evidence.manifest.digest
    assert summary["hbench_version"] == evidence.manifest.hbench_version
    assert summary["comparability"] == {}
    facts = JobFacts.model_validate(summary["facts"])
    assert facts == boards.facts
    entry = EntrySettings.model_validate(summary["entry_settings"])
    assert summary["entry_settings_digest"] == entry.digest() == EntrySettings.of(facts).digest()
    assert summary["boards"] == {"fits": ["hbench-demo"], "opens": None, "notes": []}
    assert summary["issued_run"] is None
    assert summary["upload"] == {"compressed_bytes": 10_000, "unpacked_bytes": 80_000, "files": 44}
    assert summary["redaction_rules"] == {} and summary["ci"] is None
    assert JobSummary.model_validate(summary).stored() == summary  # read back, the same


def test_the_services_own_counts_and_binding_are_stored_as_given(
    gathered: tuple[Evidence, Boards],
) -> None:
    evidence, boards = gathered
    assert evidence.job is not None and evidence.manifest is not None
    ci = SummaryCi(run_on_ci=True, runner_environment="github-hosted", run_id=7, run_attempt=1)

    summary = job_summary(
        evidence.job, evidence.manifest, boards, None, SIZE,
        redaction_rules={"github-pat": 2}, ci=ci,
    ).stored()  # fmt: skip

    assert summary["redaction_rules"] == {"github-pat": 2}
    assert summary["ci"] == {
        "bound": True, "run_on_ci": True, "runner_environment": "github-hosted",
        "run_id": 7, "run_attempt": 1,
    }  # fmt: skip


# A row as the first uploads stored it, before the keys added later.
FIRST_ROW: dict[str, Any] = {
    "format": 1, "job_id": "j-1", "job_name": "demo", "dataset": "hbench-demo@1.0",
    "agent": {"name": "oracle", "version": None, "kwargs": {"n": 1}, "options": {}},
    "model": None, "n_attempts": 1, "n_trials": 1, "n_errored_trials": 0, "n_retries": 0,
    "score": 1.0, "pass_at_k": {}, "results": {"hello-file": [1.0]},
    "usage": {"input_tokens": None, "cached_tokens": None, "output_tokens": None,
              "cost_usd": None},
    "boards": {"fits": ["hbench-demo"], "opens": None, "notes": []},
    "facts": None, "entry_settings": None, "issued_run": None,
}  # fmt: skip


class Row:
    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary


def test_a_row_stored_before_later_keys_reads_with_their_defaults() -> None:
    summary = JobSummary.of(Row(FIRST_ROW))

    assert summary.agent.arguments == {"n": 1}
    assert summary.task_digests == {} and summary.tasks_pinned is False
    assert summary.redaction_rules == {} and summary.ci is None
    assert summary.entry_settings_digest is None
    assert summary.settings().agent == "oracle"  # no stored settings: the agent alone
    assert summary.job_facts() is None
    stored = summary.stored()
    assert {key: stored[key] for key in FIRST_ROW} == FIRST_ROW


def test_a_deleted_jobs_summary_keeps_its_identity_and_task_files() -> None:
    row = Row({**FIRST_ROW, "task_digests": {"hello-file": "a" * 64}})

    kept = KeptSummary.of(row).stored()

    assert kept == {
        "format": 1, "job_id": "j-1", "job_name": "demo", "task_digests": {"hello-file": "a" * 64}
    }  # fmt: skip
    assert KeptSummary.of(Row(kept)).task_digests == {"hello-file": "a" * 64}
    with pytest.raises(ValidationError):
        JobSummary.of(Row(kept))  # results and usage went with its files


def test_a_job_deleted_before_task_digests_kept_null_and_reads_as_none() -> None:
    # Deleting kept each key as it was, null when the job had none.
    old = {"format": 1, "job_id": "j-1", "job_name": "demo", "task_digests": None}

    assert KeptSummary.of(Row(old)).task_digests == {}
    nulls = {**FIRST_ROW, "agent": {"name": "oracle", "kwargs": None}, "usage": None}
    summary = JobSummary.of(Row(nulls))
    assert summary.agent.arguments == {} and summary.usage.input_tokens is None


SUMMARY_READ_BY_KEY = re.compile(r"summary\s*(\[|\.get\(|\.keys\(|\.items\()")


def test_the_stored_summary_is_read_through_its_model_alone() -> None:
    app = Path(__file__).parents[3] / "app"
    found = [
        f"{path.relative_to(app)}:{number}: {line.strip()}"
        for path in sorted(app.rglob("*.py"))
        if path.name != "summary.py" or path.parent.name != "checks"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SUMMARY_READ_BY_KEY.search(line)
    ]

    assert found == []  # read it as `JobSummary.of(row)`, whose fields mypy checks


def test_an_issued_run_is_named_in_the_summary(gathered: tuple[Evidence, Boards]) -> None:
    evidence, boards = gathered
    issued = IssuedSpec("run-7", {}, "0" * 64, "hbench-demo", "oracle-a1b2c3")

    summary = summary_of(evidence, boards, issued)

    assert summary["issued_run"] == {
        "id": "run-7",
        "board": "hbench-demo",
        "entry": "oracle-a1b2c3",
    }


def test_the_fingerprint_keeps_each_trials_task_times_and_tokens(job: Job) -> None:
    printed = fingerprint(job)

    assert printed["job_id"] == job.job_id
    trials = printed["trials"]
    assert len(trials) == 10
    assert set(trials[0]) == {
        "task", "started_at", "finished_at", "input_tokens", "cached_tokens", "output_tokens"
    }  # fmt: skip
    assert [t["task"] for t in trials] == sorted(t["task"] for t in trials)
    assert fingerprint(job) == printed  # the same job, the same print
