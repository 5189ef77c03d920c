"""The stored summary of an accepted job, and the fingerprint that outlives it."""

from __future__ import annotations

import json
from typing import Any

from app.checks.boards import Boards
from app.checks.evidence import Evidence, IssuedSpec
from app.checks.summary import UploadSize, fingerprint, job_summary
from hbench.jobs.models import Job
from registry.datarepo.models import RunUsage
from registry.placement import EntrySettings, JobFacts

SIZE = UploadSize(compressed_bytes=10_000, unpacked_bytes=80_000, files=44)


def summary_of(
    evidence: Evidence, boards: Boards, issued: IssuedSpec | None = None
) -> dict[str, Any]:
    assert evidence.job is not None and evidence.manifest is not None
    return job_summary(evidence.job, evidence.manifest, boards, issued, SIZE)


def test_the_summary_holds_what_your_bench_and_publishing_read(
    gathered: tuple[Evidence, Boards], job: Job
) -> None:
    evidence, boards = gathered
    assert evidence.manifest is not None

    summary = summary_of(evidence, boards)

    assert json.loads(json.dumps(summary)) == summary  # stored as JSON, as it is
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
