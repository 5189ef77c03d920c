"""Which settings of a job change what its score means, so boards compare like with like.

`comparability` flattens them from a `JobConfig` (Harbor's defaults already
applied) to `dotted.name -> value`: timeout multipliers per phase, agent and
verifier timeout overrides, resource overrides, the environment, extra hosts,
task filters, extra instructions, agent options such as a prompt template.
Two jobs ran under the same conditions when these are equal; their datasets,
agents and models are compared on their own.
"""

from __future__ import annotations

from pydantic import JsonValue

from hbench.jobs.config import (
    TIMEOUT_PHASES,
    AgentSettings,
    DatasetSettings,
    EnvironmentSettings,
    JobConfig,
    VerifierSettings,
)


def comparability(config: JobConfig) -> dict[str, JsonValue]:
    """The settings that change what a score means, flattened to `dotted.name -> value`.

    Two jobs ran under the same conditions when these are equal (their datasets,
    agents and models are compared on their own). Timeout multipliers are the
    effective per-phase values, so `--timeout-multiplier 2` equals setting all
    four phases to 2. Secret-bearing `env` maps count by their keys only.
    """
    settings: dict[str, JsonValue] = {
        f"timeout_multiplier.{phase}": config.phase_multiplier(phase) for phase in TIMEOUT_PHASES
    }
    settings |= {
        "n_attempts": config.n_attempts,
        "install_only": config.install_only,
        "user_agent": config.user_agent,
        "metrics": [m.model_dump(mode="json") for m in config.metrics],
        "extra_instructions": list(config.extra_instructions),
        "extra_instruction_paths": list(config.extra_instruction_paths),
        "tasks": [
            t.model_dump(mode="json", exclude={"overwrite", "download_dir"}) for t in config.tasks
        ],
        "source_jobs": list(config.source_jobs),
    }
    settings |= _prefixed("environment", _environment_settings(config.environment))
    settings |= _prefixed("verifier", _verifier_settings(config.verifier))
    for index, agent in enumerate(config.agents):
        settings |= _prefixed(f"agents[{index}]", _agent_settings(agent))
    for index, dataset in enumerate(config.datasets):
        settings |= _prefixed(f"datasets[{index}]", _dataset_filters(dataset))
    return settings


def comparability_differences(a: JobConfig, b: JobConfig) -> list[str]:
    """Each comparability setting on which two jobs differ, as `name: a != b`."""
    left, right = comparability(a), comparability(b)
    return [
        f"{name}: {left.get(name)!r} != {right.get(name)!r}"
        for name in sorted(left.keys() | right.keys())
        if left.get(name) != right.get(name)
    ]


def non_default_settings(config: JobConfig) -> dict[str, JsonValue]:
    """The comparability settings that differ from a plain `harbor run` with the same agents.

    This is what a board that only takes default settings refuses: raised
    timeouts, resource overrides, extra instructions, task filters and so on.
    """
    baseline = JobConfig(
        agents=[
            AgentSettings(name=a.name, import_path=a.import_path, model_name=a.model_name)
            for a in config.agents
        ],
        datasets=[
            DatasetSettings.model_validate(
                d.model_dump(exclude={"task_names", "exclude_task_names", "n_tasks"})
            )
            for d in config.datasets
        ],
        environment=EnvironmentSettings(
            type=config.environment.type, import_path=config.environment.import_path
        ),
        n_attempts=config.n_attempts,
    )
    defaults = comparability(baseline)
    return {
        name: value for name, value in comparability(config).items() if defaults.get(name) != value
    }


def _prefixed(prefix: str, values: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {f"{prefix}.{key}": value for key, value in values.items()}


def _environment_settings(env: EnvironmentSettings) -> dict[str, JsonValue]:
    keep = {
        "type", "import_path", "cpu_enforcement_policy", "memory_enforcement_policy",
        "override_cpus", "override_memory_mb", "override_storage_mb", "override_gpus",
        "override_tpu", "mounts", "extra_docker_compose", "kwargs", "extra_allowed_hosts",
    }  # fmt: skip
    return {**env.model_dump(mode="json", include=keep), "env_keys": sorted(env.env)}


def _verifier_settings(verifier: VerifierSettings) -> dict[str, JsonValue]:
    keep = {
        "override_timeout_sec", "max_timeout_sec", "import_path", "kwargs", "disable",
        "extra_allowed_hosts",
    }  # fmt: skip
    return {**verifier.model_dump(mode="json", include=keep), "env_keys": sorted(verifier.env)}


def _agent_settings(agent: AgentSettings) -> dict[str, JsonValue]:
    keep = {
        "override_timeout_sec", "override_setup_timeout_sec", "max_timeout_sec", "base_url",
        "model_api_format", "skip_model_parsing", "skills", "resume_trajectory",
        "load_trajectory", "extra_allowed_hosts", "kwargs", "mcp_servers",
    }  # fmt: skip
    return {**agent.model_dump(mode="json", include=keep), "env_keys": sorted(agent.env)}


def _dataset_filters(dataset: DatasetSettings) -> dict[str, JsonValue]:
    return dataset.model_dump(mode="json", include={"task_names", "exclude_task_names", "n_tasks"})
