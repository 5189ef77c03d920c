"""`config.json` read with Harbor's defaults put back, checked against Harbor's own model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harbor.models.job.config import JobConfig as HarborJobConfig

from hbench.jobs.comparability import comparability_differences
from hbench.jobs.config import DEFAULT_RETRY_EXCLUSIONS, JobConfig
from hbench.sandbox import IMPORT_PATH


def test_an_empty_config_is_harbors_defaults() -> None:
    config = JobConfig.model_validate({})
    harbor = HarborJobConfig.model_validate({})

    assert [a.name for a in config.agents] == ["oracle"] == [a.name for a in harbor.agents]
    assert config.environment.type == "docker" == harbor.environment.type
    assert config.retry.exclude_exceptions == DEFAULT_RETRY_EXCLUSIONS
    assert harbor.retry.exclude_exceptions == DEFAULT_RETRY_EXCLUSIONS
    assert len(DEFAULT_RETRY_EXCLUSIONS) == 10
    assert config.n_attempts == harbor.n_attempts == 1
    assert config.timeout_multiplier == harbor.timeout_multiplier == 1.0
    assert config.n_concurrent_trials == harbor.n_concurrent_trials


def test_a_custom_environment_has_no_type_and_unknown_keys_are_ignored() -> None:
    config = JobConfig.model_validate(
        {"environment": {"import_path": IMPORT_PATH}, "a_key_from_harbor_0_26": {"x": 1}}
    )
    assert config.environment.type is None and config.environment.import_path == IMPORT_PATH


def test_a_custom_agent_is_read_wherever_harbor_put_it() -> None:
    config = JobConfig.model_validate(
        {"agents": [{"name": "pkg.mod:Agent"}, {"import_path": "pkg.mod:Other"}, {"name": "acp:x"}]}
    )
    assert [a.custom_class for a in config.agents] == ["pkg.mod:Agent", "pkg.mod:Other", None]
    assert [a.label for a in config.agents] == ["pkg.mod:Agent", "pkg.mod:Other", "acp:x"]


def test_legacy_layouts_are_migrated() -> None:
    config = JobConfig.model_validate(
        {
            "orchestrator": {"n_concurrent_trials": 2, "retry": {"max_retries": 3}},
            "datasets": [{"name": "tb", "registry": {"path": "reg.json"}}],
            "environment": {"mounts_json": [{"type": "bind", "source": "/a", "target": "/b"}]},
        }
    )
    assert config.n_concurrent_trials == 2 and config.retry.max_retries == 3
    assert config.datasets[0].registry_path == "reg.json"
    assert config.environment.mounts == [{"type": "bind", "source": "/a", "target": "/b"}]


def test_retry_decisions_follow_harbors_rules() -> None:
    retry = JobConfig.model_validate({"retry": {"max_retries": 2}}).retry
    assert retry.retries("RuntimeError") and not retry.retries("AgentTimeoutError")
    narrow = JobConfig.model_validate(
        {"retry": {"max_retries": 1, "include_exceptions": ["A", "AgentTimeoutError"]}}
    ).retry
    assert narrow.retries("A") and not narrow.retries("B")
    # Exclusion wins over inclusion.
    assert not narrow.retries("AgentTimeoutError")
    assert not JobConfig().retry.retries("RuntimeError"), "no retries by default"


def test_phase_multipliers_fall_back_to_the_global_one() -> None:
    config = JobConfig(timeout_multiplier=2.0, agent_timeout_multiplier=3.0)
    assert config.phase_multiplier("agent") == 3.0 and config.phase_multiplier("verifier") == 2.0
    same = JobConfig(
        agent_timeout_multiplier=2.0,
        verifier_timeout_multiplier=2.0,
        agent_setup_timeout_multiplier=2.0,
        environment_build_timeout_multiplier=2.0,
    )
    assert comparability_differences(JobConfig(timeout_multiplier=2.0), same) == []


@pytest.mark.harbor
def test_every_real_config_reads_back_equal_to_harbors(real_jobs: dict[str, Path]) -> None:
    for job in real_jobs.values():
        raw = json.loads((job / "config.json").read_text())
        ours, harbors = JobConfig.model_validate(raw), HarborJobConfig.model_validate(raw)
        assert [
            a.model_dump(include={"name", "import_path", "model_name"}) for a in ours.agents
        ] == [a.model_dump(include={"name", "import_path", "model_name"}) for a in harbors.agents]
        assert ours.retry.model_dump() == harbors.retry.model_dump()
        assert ours.environment.type == harbors.environment.type
        assert ours.n_attempts == harbors.n_attempts
