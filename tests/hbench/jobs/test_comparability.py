"""The settings that decide whether two jobs are comparable, on real and written configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbench.jobs.comparability import (
    comparability,
    comparability_differences,
    non_default_settings,
)
from hbench.jobs.config import JobConfig
from hbench.sandbox import IMPORT_PATH


def read_config(job: Path) -> JobConfig:
    return JobConfig.model_validate_json((job / "config.json").read_text())


@pytest.mark.harbor
def test_plain_runs_are_comparable_and_use_default_settings(
    oracle_job: Path, nop_job: Path
) -> None:
    oracle, nop = read_config(oracle_job), read_config(nop_job)
    assert non_default_settings(oracle) == {} == non_default_settings(nop)
    # Attempts are a setting of their own; nothing else differs.
    assert comparability_differences(oracle, nop) == ["n_attempts: 2 != 1"]
    assert comparability(oracle)["environment.import_path"] == IMPORT_PATH


@pytest.mark.harbor
def test_raised_timeouts_and_task_filters_are_not_default(timeout_job: Path, nop_job: Path) -> None:
    config = read_config(timeout_job)
    assert non_default_settings(config) == {
        "timeout_multiplier.agent": 0.02,
        "datasets[0].task_names": ["hello-file"],
    }
    assert comparability_differences(read_config(nop_job), config) == [
        "datasets[0].task_names: None != ['hello-file']",
        "timeout_multiplier.agent: 1.0 != 0.02",
    ]


def test_every_override_a_board_cares_about_is_listed() -> None:
    config = JobConfig.model_validate(
        {
            "agents": [
                {
                    "name": "terminus-2",
                    "model_name": "m",
                    "max_timeout_sec": 60,
                    "override_timeout_sec": 30,
                    "kwargs": {"prompt_template_path": "t.j2"},
                    "env": {"SECRET": "${SECRET}"},
                }
            ],
            "verifier": {"override_timeout_sec": 10, "disable": True},
            "environment": {"override_cpus": 8, "override_memory_mb": 4096, "type": "daytona"},
            "extra_instructions": ["try harder"],
            "datasets": [{"name": "tb", "version": "2.0", "exclude_task_names": ["x*"]}],
        }
    )
    assert non_default_settings(config) == {
        "agents[0].max_timeout_sec": 60.0,
        "agents[0].override_timeout_sec": 30.0,
        "agents[0].kwargs": {"prompt_template_path": "t.j2"},
        "agents[0].env_keys": ["SECRET"],
        "verifier.override_timeout_sec": 10.0,
        "verifier.disable": True,
        "environment.override_cpus": 8.0,
        "environment.override_memory_mb": 4096,
        "extra_instructions": ["try harder"],
        "datasets[0].exclude_task_names": ["x*"],
    }
