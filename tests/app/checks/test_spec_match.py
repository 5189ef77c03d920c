"""Comparing a job's config with its issued spec, Harbor's defaults applied on both sides."""

from __future__ import annotations

from typing import Any

from app.checks.spec_match import Difference, spec_differences
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS, JobConfig

SPEC: dict[str, Any] = {
    "job_name": "hbench-demo-oracle-a1b2c3-0f0f0f0f",
    "n_attempts": 1,
    "agents": [{"name": "oracle"}],
    "datasets": [{"name": "hbench-demo", "version": "1.0", "registry_path": "/srv/demo.json"}],
}


def ran(**config: Any) -> JobConfig:
    """A config.json as Harbor writes it: without the keys that hold defaults."""
    return JobConfig.model_validate(
        {"job_name": SPEC["job_name"], "datasets": SPEC["datasets"], **config}
    )


def test_absent_keys_equal_harbors_defaults() -> None:
    assert spec_differences(SPEC, ran()) == []


def test_jobs_dir_and_max_retries_may_differ() -> None:
    assert spec_differences(SPEC, ran(jobs_dir="elsewhere", retry={"max_retries": 4})) == []


def test_the_same_exclusions_in_another_order_are_equal() -> None:
    exclusions = sorted(DEFAULT_RETRY_EXCLUSIONS, reverse=True)
    spec = {**SPEC, "retry": {"exclude_exceptions": sorted(DEFAULT_RETRY_EXCLUSIONS)}}

    assert spec_differences(spec, ran(retry={"exclude_exceptions": exclusions})) == []


def test_each_field_that_differs_is_named_with_both_values() -> None:
    differences = spec_differences(SPEC, ran(n_attempts=3, timeout_multiplier=2.0))

    assert differences == [
        Difference("n_attempts", 1, 3),
        Difference("timeout_multiplier", 1.0, 2.0),
    ]
    assert differences[0].describe() == "n_attempts is 3 in the job, 1 in the spec"


def test_an_added_option_is_named_by_its_key() -> None:
    (difference,) = spec_differences(
        SPEC, ran(agents=[{"name": "oracle", "kwargs": {"temperature": 0.7}}])
    )

    assert difference.field == "agents[0].kwargs.temperature"
    assert difference.describe() == (
        "agents[0].kwargs.temperature is 0.7 in the job, absent in the spec"
    )


def test_a_second_agent_is_one_difference_and_long_values_are_cut() -> None:
    (difference,) = spec_differences(SPEC, ran(agents=[{"name": "oracle"}, {"name": "nop"}]))

    assert difference.field == "agents"
    described = difference.describe()
    assert described.startswith("agents is [{")
    assert "…" in described and len(described) < 200


def test_a_retry_setting_other_than_max_retries_must_match() -> None:
    (difference,) = spec_differences(
        SPEC, ran(retry={"max_retries": 2, "include_exceptions": ["RuntimeError"]})
    )

    assert difference.field == "retry.include_exceptions"
