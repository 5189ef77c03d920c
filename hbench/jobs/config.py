"""A job's `config.json` as Harbor 0.25 writes it, with Harbor's defaults put back.

Harbor writes `config.json` with `exclude_defaults=True`, so an absent key means
Harbor's default, not "unset": no `agents` key is the single agent `oracle`, no
`retry` key is no retries with the ten default exclusions, and so on. These
models carry those defaults, so checks read settings, not raw keys. Unknown
keys are ignored: Harbor adds fields between versions. See
`reference/harbor.md` §2 (schema) and §10 (older layouts migrated here).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

DEFAULT_RETRY_EXCLUSIONS: frozenset[str] = frozenset(
    {
        "AgentTimeoutError",
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "ApiUsageLimitError",
        "AgentSafetyRefusalError",
        "AgentAuthenticationError",
        "ModelNotFoundError",
        "UnsupportedModelParametersError",
    }
)
"""Exception types Harbor 0.25 never retries unless the job says otherwise (`RetryConfig`)."""

DEFAULT_AGENT = "oracle"
"""The agent Harbor runs when `config.json` names none (`AgentConfig.set_default_name`)."""

DEFAULT_ENVIRONMENT = "docker"
"""The environment type when neither `type` nor `import_path` is set."""

TIMEOUT_PHASES = ("agent", "verifier", "agent_setup", "environment_build")
"""The phases with their own timeout multiplier (`--agent-timeout-multiplier` and so on)."""

ACP_PREFIX = "acp:"
"""`acp:<agent>[@version]` names an ACP registry agent, not an import path."""


# Harbor names a field `kwargs`. The pydantic mypy plugin gives each model an
# `__init__(..., **kwargs)`, whose name clashes with that field; the classes holding
# one ignore that clash (`no-redef`), which only concerns keyword construction.


class _HarborModel(BaseModel):
    # Harbor adds fields between versions; the reader keeps what it knows and skips the rest.
    model_config = ConfigDict(extra="ignore", frozen=True)


class RetrySettings(_HarborModel):
    """`retry`: which failed trials Harbor retried within the run, and how often."""

    max_retries: int = Field(default=0, ge=0)
    """Retries per trial after its first attempt; 0 means failures stay as they are."""
    include_exceptions: frozenset[str] | None = None
    """Only these exception types are retried; None means every type not excluded."""
    exclude_exceptions: frozenset[str] | None = DEFAULT_RETRY_EXCLUSIONS
    """Exception types never retried; wins over `include_exceptions`. `--retry-exclude`
    on Harbor's command line replaces this whole set rather than adding to it."""
    wait_multiplier: float = 1.0
    min_wait_sec: float = 1.0
    max_wait_sec: float = 60.0

    def retries(self, exception_type: str) -> bool:
        """Whether Harbor retries a trial that failed with this exception (`TrialQueue`)."""
        if self.max_retries == 0:
            return False
        if self.exclude_exceptions and exception_type in self.exclude_exceptions:
            return False
        return not self.include_exceptions or exception_type in self.include_exceptions


class EnvironmentSettings(_HarborModel):  # type: ignore[no-redef]
    """`environment`: where trials ran, and the resources they were given."""

    type: str | None = None
    """The built-in environment type, such as `docker`; None when `import_path` is set."""
    import_path: str | None = None
    """A custom environment class, `module.path:ClassName`."""
    force_build: bool = False
    delete: bool = True
    stream: bool = False
    cpu_enforcement_policy: str = "auto"
    memory_enforcement_policy: str = "auto"
    override_cpus: float | None = None
    """Replaces every task's CPU count."""
    override_memory_mb: int | None = None
    """Replaces every task's memory limit."""
    override_storage_mb: int | None = None
    """Replaces every task's storage limit."""
    override_gpus: int | None = None
    """Replaces every task's GPU count."""
    override_tpu: dict[str, JsonValue] | None = None
    """Replaces every task's TPU slice (`{type, topology}`)."""
    mounts: list[dict[str, JsonValue]] | None = None
    """Extra volumes mounted into the agent's environment."""
    extra_docker_compose: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Variables set in the environment; Harbor writes secrets as `${NAME}` templates."""
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    extra_allowed_hosts: list[str] = Field(default_factory=list)
    """Hosts added to every task's network allowlist."""

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {**data}
        if "mounts_json" in data:  # the key's name before 0.25
            data.setdefault("mounts", data.pop("mounts_json"))
        # Harbor: docker only when neither a type nor a custom class is named.
        if data.get("type") is None and data.get("import_path") is None:
            data["type"] = DEFAULT_ENVIRONMENT
        return data


class VerifierSettings(_HarborModel):  # type: ignore[no-redef]
    """`verifier`: how trials were graded."""

    override_timeout_sec: float | None = None
    """Replaces every task's verifier timeout."""
    max_timeout_sec: float | None = None
    """Caps every task's verifier timeout."""
    include_logs: list[str] = Field(default_factory=list)
    exclude_logs: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    import_path: str | None = None
    """A custom verifier class, `module.path:ClassName`."""
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    disable: bool = False
    """True when trials were not graded at all (`--disable-verification`)."""
    extra_allowed_hosts: list[str] = Field(default_factory=list)


class AgentSettings(_HarborModel):  # type: ignore[no-redef]
    """One entry of `agents`: an agent, its model and its overrides."""

    name: str | None = None
    """A built-in agent, such as `terminus-2`; Harbor's `--agent` also puts a custom
    `module:Class` here. None only when `import_path` is set."""
    import_path: str | None = None
    model_name: str | None = None
    """The model as given, such as `anthropic/claude-sonnet-4-5`."""
    base_url: str | None = None
    """Another inference endpoint than the provider's own."""
    model_api_key_name: str | None = None
    model_api_format: str | None = None
    skip_model_parsing: bool = False
    n_concurrent: int | None = None
    concurrency_group: str | None = None
    skills: list[str] = Field(default_factory=list)
    override_timeout_sec: float | None = None
    """Replaces every task's agent timeout."""
    override_setup_timeout_sec: float | None = None
    """Replaces the agent's setup timeout."""
    max_timeout_sec: float | None = None
    """Caps every task's agent timeout."""
    resume_trajectory: bool = False
    load_trajectory: str | None = None
    """A trajectory loaded as the agent's session before the first step."""
    extra_allowed_hosts: list[str] = Field(default_factory=list)
    include_logs: list[str] = Field(default_factory=list)
    exclude_logs: list[str] = Field(default_factory=list)
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    """Agent options, such as `prompt_template_path` or `reasoning_effort`."""
    env: dict[str, str] = Field(default_factory=dict)
    mcp_servers: list[dict[str, JsonValue]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("name") is None and data.get("import_path") is None:
            data = {**data, "name": DEFAULT_AGENT}
        return data

    @property
    def custom_class(self) -> str | None:
        """The custom agent class this entry runs, if any, wherever Harbor took it from."""
        if self.import_path is not None:
            return self.import_path
        name = self.name or ""
        return name if ":" in name and not name.startswith(ACP_PREFIX) else None

    @property
    def label(self) -> str:
        """How people name this agent: the built-in name, or the custom class."""
        return self.custom_class or self.name or DEFAULT_AGENT


class DatasetSettings(_HarborModel):
    """One entry of `datasets`: where tasks came from, and which of them were kept."""

    path: str | None = None
    """A local folder of task folders."""
    name: str | None = None
    """A registry dataset (no `/`) or a package dataset (`org/name`)."""
    version: str | None = None
    """The registry version asked for; None means Harbor picked one and did not record it."""
    ref: str | None = None
    """A package dataset's resolved `sha256:` digest."""
    registry_url: str | None = None
    registry_path: str | None = None
    repo: str | None = None
    overwrite: bool = False
    download_dir: str | None = None
    task_names: list[str] | None = None
    """Globs of tasks kept; None keeps every task."""
    exclude_task_names: list[str] | None = None
    """Globs of tasks dropped."""
    n_tasks: int | None = None
    """At most this many tasks, after the filters."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_registry(cls, data: Any) -> Any:
        # Harbor 0.1.x nested the registry as `registry: {url | path}`.
        if isinstance(data, dict) and isinstance(data.get("registry"), dict):
            data = {**data}
            registry = data.pop("registry")
            data.setdefault("registry_url", registry.get("url"))
            data.setdefault("registry_path", registry.get("path"))
        return data

    @property
    def ref_label(self) -> str:
        """The dataset as people write it: `name@version`, `org/name@sha256:…`, or its path."""
        if self.name is not None:
            pin = self.version or self.ref
            return f"{self.name}@{pin}" if pin else self.name
        return self.path or self.repo or "?"

    @property
    def filtered(self) -> bool:
        """Whether only part of the dataset was asked for."""
        return bool(self.task_names or self.exclude_task_names or self.n_tasks is not None)


class TaskSettings(_HarborModel):
    """One entry of `tasks`: a task named on its own, outside any dataset."""

    path: str | None = None
    git_url: str | None = None
    git_commit_id: str | None = None
    name: str | None = None
    ref: str | None = None
    overwrite: bool = False
    download_dir: str | None = None
    source: str | None = None


class MetricSettings(_HarborModel):  # type: ignore[no-redef]
    """One entry of `metrics`: an extra aggregate Harbor computed for the job."""

    type: str = "mean"
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)


class JobConfig(_HarborModel):
    """A job's `config.json`, every absent key read as Harbor's default."""

    job_name: str | None = None
    """The folder's name as asked for; None when Harbor generated a timestamp and left it out."""
    jobs_dir: str = "jobs"
    n_attempts: int = Field(default=1, ge=1)
    """Trials per task and agent (`-k`)."""
    install_only: bool = False
    skip_credential_checks: bool = False
    timeout_multiplier: float = 1.0
    """Scales every timeout unless a per-phase multiplier is set."""
    agent_timeout_multiplier: float | None = None
    verifier_timeout_multiplier: float | None = None
    agent_setup_timeout_multiplier: float | None = None
    environment_build_timeout_multiplier: float | None = None
    debug: bool = False
    n_concurrent_trials: int = 4
    quiet: bool = False
    retry: RetrySettings = Field(default_factory=RetrySettings)
    environment: EnvironmentSettings = Field(default_factory=EnvironmentSettings)
    verifier: VerifierSettings = Field(default_factory=VerifierSettings)
    metrics: list[MetricSettings] = Field(default_factory=list)
    agents: list[AgentSettings] = Field(default_factory=lambda: [AgentSettings()])
    """Every agent and model the job ran; absent means the one agent `oracle`."""
    user_agent: dict[str, JsonValue] | None = None
    """A simulated user talking with the agent, if any."""
    datasets: list[DatasetSettings] = Field(default_factory=list)
    tasks: list[TaskSettings] = Field(default_factory=list)
    artifacts: list[JsonValue] = Field(default_factory=list)
    extra_instruction_paths: list[str] = Field(default_factory=list)
    """Files whose text was appended to every task's instruction."""
    extra_instructions: list[str] = Field(default_factory=list)
    """Text appended to every task's instruction."""
    source_jobs: list[dict[str, JsonValue]] = Field(default_factory=list)
    """Jobs this one regraded or diffed; empty for a plain run."""

    @model_validator(mode="before")
    @classmethod
    def _legacy_orchestrator(cls, data: Any) -> Any:
        # Before 0.13 these lived under `orchestrator`; Harbor migrates them the same way.
        if isinstance(data, dict) and isinstance(data.get("orchestrator"), dict):
            data = {**data}
            orchestrator = data.pop("orchestrator")
            for key in ("n_concurrent_trials", "quiet", "retry"):
                if key in orchestrator:
                    data.setdefault(key, orchestrator[key])
        return data

    def phase_multiplier(self, phase: str) -> float:
        """The effective timeout multiplier of a phase: `agent`, `verifier`, `agent_setup`
        or `environment_build` (its own multiplier, else the global one)."""
        value = getattr(self, f"{phase}_timeout_multiplier")
        return self.timeout_multiplier if value is None else float(value)
