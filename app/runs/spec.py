"""The Harbor job config an issued run runs, its entry, and the variables it needs.

Pure: everything comes in as values. `hbench run --config spec.json` hands the spec to
Harbor as it is, so every key is a Harbor 0.25 JobConfig field
(../shared/reference/harbor.md §2). Besides the job's name, attempts, agent and dataset,
only fields that differ from Harbor's defaults are written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from app.runs.lookup import Target
from app.runs.policy import DOCKER
from app.runs.schemas import Declarative, Execution, RegistrySource
from registry.demo import BUNDLED_REGISTRY, DATASET_REF
from registry.placement import EntrySettings, entry_name
from registry.schema import HARBOR_CONCURRENT_TRIALS
from registry.settings import agent_options

PROMPT_TEMPLATE_FILE = "prompt.j2"
"""The template's file name in the run's folder; Harbor reads it relative to where the
run starts, which is that folder (`cd <dir> && hbench run --config spec.json`)."""

# The variable each model provider's key (or address) is read from, by the provider
# part of the model's Harbor name (`anthropic/claude-…`), as Harbor's LiteLLM-based
# agents read them (harbor/agents/agent_auth_resolution.py).
PROVIDER_VARIABLES: dict[str, tuple[str, bool, str]] = {
    "anthropic": ("ANTHROPIC_API_KEY", True, "your Anthropic API key"),
    "openai": ("OPENAI_API_KEY", True, "your OpenAI API key"),
    "gemini": ("GEMINI_API_KEY", True, "your Google Gemini API key"),
    "google": ("GEMINI_API_KEY", True, "your Google Gemini API key"),
    "deepseek": ("DEEPSEEK_API_KEY", True, "your DeepSeek API key"),
    "openrouter": ("OPENROUTER_API_KEY", True, "your OpenRouter API key"),
    "hosted_vllm": (
        "HOSTED_VLLM_API_BASE",
        False,
        "the address of your vLLM server's OpenAI API, such as http://localhost:8000/v1",
    ),
}

# The variables a remote sandbox's credentials are read from, by Harbor environment type,
# as Harbor's environment classes check them before a job starts (their `preflight`).
# Daytona also takes DAYTONA_JWT_TOKEN with DAYTONA_ORGANIZATION_ID, and Modal a
# ~/.modal.toml, in their place; the key below is the usual way, and the one named.
SANDBOX_VARIABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "daytona": (("DAYTONA_API_KEY", "your Daytona API key"),),
    "e2b": (("E2B_API_KEY", "your E2B API key"),),
    "modal": (
        ("MODAL_TOKEN_ID", "your Modal token's id"),
        ("MODAL_TOKEN_SECRET", "your Modal token's secret"),
    ),
    "runloop": (("RUNLOOP_API_KEY", "your Runloop API key"),),
}


@dataclass(frozen=True)
class Variable:
    """A variable the run needs; `value` is None when the person running it supplies it."""

    name: str
    value: str | None
    secret: bool
    description: str


@dataclass(frozen=True)
class DatasetSource:
    """Where Harbor reads the dataset's tasks; neither set means Harbor's default registry."""

    registry_url: str | None = None
    registry_path: str | None = None


@dataclass(frozen=True)
class RunPlan:
    """Everything the spec is built from."""

    job_name: str
    n_attempts: int
    agent: str
    model_name: str | None
    kwargs: dict[str, JsonValue]
    prompt_template: str | None
    extra_instructions: list[str]
    dataset: str  # `name@version`
    package: bool  # an `org/name` package dataset, pinned by `ref` rather than `version`
    task_names: list[str] | None
    source: DatasetSource
    environment_import_path: str | None = None
    environment_type: str | None = None
    """A Harbor environment type other than docker, such as `daytona`."""
    n_concurrent_trials: int | None = None
    """Trials at once, when not Harbor's default."""


def text_digest(text: str) -> str:
    """`sha256:<hex>` of a text, as entries record templates and instructions."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entry_settings(declarative: Declarative) -> EntrySettings:
    """What the entry stands for: the agent, its options, and its texts' digests."""
    template = declarative.prompt_template
    return EntrySettings(
        agent=declarative.agent,
        options=agent_options({"kwargs": declarative.kwargs}),
        prompt_template_digest=text_digest(template) if template is not None else None,
        extra_instruction_digests=[text_digest(t) for t in declarative.extra_instructions],
    )


def entry_for(owner: str, declarative: Declarative) -> str:
    """The entry's name for this owner and these settings, such as `terminus-2-a3f9c1`."""
    return entry_name(owner, entry_settings(declarative))


def job_name(board: str, entry: str, suffix: str) -> str:
    """`<board>-<entry>-<8 hex>`: unique per run, and readable as where it counts."""
    return f"{board}-{entry}-{suffix}"


def dataset_source(target: Target, mirror: RegistrySource | None) -> DatasetSource:
    """The body's mirror; else, for the demo dataset, the registry hbench lays out where the
    run starts (`registry.demo.BUNDLED_REGISTRY`), never a file of this machine's; else the
    registry the benchmark names; else Harbor's default registry."""
    if mirror is not None:
        return DatasetSource(registry_url=mirror.url, registry_path=mirror.path)
    if target.dataset == DATASET_REF:
        return DatasetSource(registry_path=BUNDLED_REGISTRY)
    return DatasetSource(registry_url=target.benchmark.harbor.registry_url)


def plan_run(
    target: Target,
    declarative: Declarative,
    n_attempts: int,
    name: str,
    source: DatasetSource,
    *,
    environment: str | None = None,
    n_concurrent_trials: int | None = None,
) -> RunPlan:
    """The plan of one issued run of `target`; `environment`, when not Harbor's docker one,
    is an environment type the board's policy allows or an environment class (`module:Class`)
    the policy allowed for the benchmark; `n_concurrent_trials` is within the board's."""
    task_set = target.task_set
    if environment == DOCKER:
        environment = None
    is_class = environment is not None and ":" in environment
    if n_concurrent_trials == HARBOR_CONCURRENT_TRIALS:
        n_concurrent_trials = None
    return RunPlan(
        job_name=name,
        n_attempts=n_attempts,
        agent=declarative.agent,
        model_name=target.model.harbor_names[0] if target.model.harbor_names else None,
        kwargs=dict(declarative.kwargs),
        prompt_template=declarative.prompt_template,
        extra_instructions=list(declarative.extra_instructions),
        dataset=target.dataset,
        package=target.benchmark.harbor.reach == "package",
        # A named subset runs its listed tasks; the full set runs the whole dataset.
        task_names=list(task_set.tasks) if task_set.name != "full" and task_set.tasks else None,
        source=source,
        environment_import_path=environment if is_class else None,
        environment_type=None if is_class else environment,
        n_concurrent_trials=n_concurrent_trials,
    )


def build_spec(plan: RunPlan) -> dict[str, JsonValue]:
    """The Harbor job config of a plan: its name, attempts, agent and dataset, and what
    else is set.

    Harbor writes a job's `config.json` without values equal to its defaults (`n_attempts`
    1, the lone `oracle` agent), so comparing a job to its spec means comparing the two
    with Harbor's defaults applied, not their raw JSON.
    """
    agent: dict[str, JsonValue] = {"name": plan.agent}
    if plan.model_name is not None:
        agent["model_name"] = plan.model_name
    kwargs = dict(plan.kwargs)
    if plan.prompt_template is not None:
        kwargs["prompt_template_path"] = PROMPT_TEMPLATE_FILE
    if kwargs:
        agent["kwargs"] = kwargs
    spec: dict[str, JsonValue] = {
        "job_name": plan.job_name,
        "n_attempts": plan.n_attempts,
        "agents": [agent],
        "datasets": [dataset_entry(plan)],
    }
    if plan.extra_instructions:
        spec["extra_instructions"] = list(plan.extra_instructions)
    if plan.n_concurrent_trials is not None:
        spec["n_concurrent_trials"] = plan.n_concurrent_trials
    if plan.environment_import_path is not None:
        spec["environment"] = {"import_path": plan.environment_import_path}
    elif plan.environment_type is not None:
        spec["environment"] = {"type": plan.environment_type}
    return spec


def execution_of(spec: Mapping[str, Any]) -> Execution:
    """Where a spec's trials run and how many at once, Harbor's defaults filled in."""
    environment = spec.get("environment")
    environment = environment if isinstance(environment, Mapping) else {}
    where = environment.get("import_path") or environment.get("type") or DOCKER
    concurrent = spec.get("n_concurrent_trials")
    return Execution(
        environment=str(where),
        n_concurrent_trials=concurrent if isinstance(concurrent, int) else HARBOR_CONCURRENT_TRIALS,
    )


def dataset_entry(plan: RunPlan) -> dict[str, JsonValue]:
    name, _, version = plan.dataset.partition("@")
    entry: dict[str, JsonValue] = {"name": name, "ref" if plan.package else "version": version}
    if plan.source.registry_url is not None:
        entry["registry_url"] = plan.source.registry_url
    if plan.source.registry_path is not None:
        entry["registry_path"] = plan.source.registry_path
    if plan.task_names is not None:
        # Harbor reads these as globs; task names are plain names, so each matches itself.
        entry["task_names"] = list(plan.task_names)
    return entry


def run_environment(model_name: str | None, environment_type: str | None = None) -> list[Variable]:
    """The variables the run needs: telemetry off, the model provider's key by name, and
    the remote sandbox's credentials by name."""
    variables = [Variable("HARBOR_TELEMETRY", "0", False, "keeps Harbor's telemetry off")]
    provider = model_name.split("/", 1)[0].lower() if model_name and "/" in model_name else None
    if provider in PROVIDER_VARIABLES:
        name, secret, description = PROVIDER_VARIABLES[provider]
        variables.append(Variable(name, None, secret, description))
    for name, description in SANDBOX_VARIABLES.get(environment_type or "", ()):
        variables.append(Variable(name, None, True, description))
    return variables
