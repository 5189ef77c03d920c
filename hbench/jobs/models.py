"""What hbench knows about a Harbor job once it has read the folder: `Job` and its `Trial`s.

`hbench.jobs.reader.read_job` builds these from the files Harbor wrote; the
registry and the service read them and never the raw JSON. Harbor's own
aggregate figures are kept apart (`Job.reported`), so a check can compare
them with the figures recomputed here from the trials.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from hbench.jobs.config import (
    TIMEOUT_PHASES,
    AgentSettings,
    DatasetSettings,
    EnvironmentSettings,
    JobConfig,
    RetrySettings,
)
from hbench.jobs.files import JobStatsFile
from hbench.jobs.scoring import evals_key

UNPARSED_PROVIDER = "harbor-skip-parsing"
"""The provider Harbor records for a model it was told not to parse (`--sm`)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Timing(_Frozen):
    """When one phase of a trial started and finished (UTC, as Harbor records trials)."""

    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def seconds(self) -> float | None:
        """The phase's duration, or None when it did not both start and finish."""
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class StepRewards(_Frozen):
    """One step of a multi-step trial: its name and the rewards its verifier gave."""

    step_name: str
    rewards: dict[str, float] | None = None


class LockedTask(_Frozen):
    """One planned trial as the job's `lock.json` records it: its task and the task's digest."""

    task_name: str
    digest: str


class Trial(_Frozen):
    """One trial folder: one attempt of one task by one agent and model.

    A folder without `result.json` (the trial was interrupted) is kept, with
    `has_result` False and the result's fields None, so checks can name it.
    """

    trial_name: str
    """The folder's name, `<task>__<7 chars>`; unique within the job."""
    path: Path
    has_result: bool
    """False when the folder has no `result.json`: the trial never ended."""
    trial_id: str | None = None
    """The attempt's UUID; a retry reuses the folder name with a new id."""
    job_id: str | None = None
    """The job UUID the trial's config names; equals `Job.job_id` in an untouched job."""
    task_name: str | None = None
    """`[task].name` of task.toml when set (`org/name`), else the task's folder name."""
    task_digest: str | None = None
    """`sha256:…` of the task's files, from the trial's `lock.json`; the durable task identity."""
    locked_task_name: str | None = None
    """The task's name in the trial's `lock.json`: for a task from a folder, Harbor writes
    the folder's name there (and in the job's), whatever `[task].name` says."""
    source: str | None = None
    """The dataset the task came from, as in Harbor's evals keys; None for ad-hoc tasks."""
    attempt: int | None = None
    """1..n within its task and agent and model group, in order of `started_at`."""
    rewards: dict[str, float] | None = None
    """The verifier's rewards; None when the trial was not graded."""
    reward: float | None = None
    """The primary reward: `rewards["reward"]`, or the only value."""
    exception_type: str | None = None
    """The bare class name of the error the trial recorded, such as `AgentTimeoutError`."""
    exception_message: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: Timing | None = None
    agent_setup: Timing | None = None
    agent_execution: Timing | None = None
    verifier: Timing | None = None
    steps: tuple[StepRewards, ...] | None = None
    """The steps of a multi-step trial, in order; None for a trial of one step."""
    n_input_tokens: int | None = None
    """Input tokens, cached ones included, as the agent reported them."""
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    agent_name: str | None = None
    """The agent's own name, such as `oracle` (a custom class reports its own)."""
    agent_version: str | None = None
    model_name: str | None = None
    """The model without its provider, such as `claude-sonnet-4-5`."""
    model_provider: str | None = None

    @property
    def model(self) -> str | None:
        """The model as `--model` takes it: `provider/name`, or the name alone.

        With `--skip-model-parsing` Harbor keeps the name whole and records the
        provider `harbor-skip-parsing`, so the name alone is the model then.
        """
        if self.model_name is None:
            return None
        if self.model_provider in (None, UNPARSED_PROVIDER):
            return self.model_name
        return f"{self.model_provider}/{self.model_name}"

    @property
    def errored(self) -> bool:
        """Whether the trial recorded an exception (it may still have a reward)."""
        return self.exception_type is not None

    @property
    def evals_key(self) -> str | None:
        """The agent, model and dataset group Harbor counts this trial in."""
        if self.agent_name is None:
            return None
        return evals_key(self.agent_name, self.model_name, self.source)


class LoggedRetry(_Frozen):
    """One retry Harbor logged in `job.log`: the failed attempt itself is deleted before the
    retry, so this line is all that is left of it."""

    trial_name: str
    exception_type: str
    """The exception that made Harbor retry the trial."""


class EvalScore(_Frozen):
    """Figures recomputed from the trials of one agent, model and dataset group."""

    key: str
    """Harbor's evals key, such as `oracle__hbench-demo`."""
    n_trials: int
    """Trials with a result, errored ones included."""
    n_errors: int
    mean: float
    """Σ primary reward / `n_trials`; trials without a reward count 0."""
    metrics: dict[str, float]
    """Harbor's `Mean` metric: `{"mean": …}`, or one mean per reward key."""
    pass_at_k: dict[int, float]
    """Harbor's pass@k; empty when rewards are not all 0/1 or a task has one trial."""


class Job(_Frozen):
    """A Harbor job folder, read: its settings, its trials, and its score."""

    path: Path
    job_id: str
    """The job's UUID (`result.json` `id`); kept when a job is resumed."""
    job_name: str
    """`config.json`'s `job_name`, else the folder's name."""
    config: JobConfig
    harbor_version: str | None
    """From `lock.json`, the only place Harbor records it; None without a lock."""
    started_at: datetime
    """Naive local time of the machine that ran the job, as Harbor writes it."""
    updated_at: datetime | None
    finished_at: datetime | None
    """None when the run stopped before its end (crash, Ctrl-C, killed runner)."""
    n_total_trials: int
    """Trials Harbor planned: tasks x agents x `n_attempts`."""
    n_locked_trials: int | None
    """Entries of `lock.json`'s `trials`, one per planned trial; None without a lock."""
    locked_tasks: tuple[LockedTask, ...] = ()
    """Each entry of `lock.json`'s `trials`: the planned trial's task and its digest."""
    lock_created_at: datetime | None = None
    """When the job first started, in UTC, as `lock.json` records it; None without a lock."""
    trials: tuple[Trial, ...]
    """Every trial folder, by task, agent and attempt; folders without a result last."""
    reported: JobStatsFile
    """Harbor's own aggregate `stats` from `result.json`, for cross-checks."""
    logged_retries: tuple[LoggedRetry, ...] = ()
    """Every retry `job.log` records, across resumes; `reported.n_retries` only counts them."""
    score: float
    """The mean primary reward over trials with a result, errored ones counting 0."""
    pass_at_k: dict[int, float]
    """Harbor's pass@k when the job has one agent, model and dataset group, else empty."""
    evals: dict[str, EvalScore] = Field(default_factory=dict)
    """Recomputed figures per agent, model and dataset group, keyed as Harbor keys them."""
    n_input_tokens: int | None = None
    """Summed over trials as Harbor sums them; None when no agent reported any."""
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None

    @property
    def finished(self) -> bool:
        """Whether Harbor reached the end of the run (`finished_at` is set)."""
        return self.finished_at is not None

    @property
    def n_retries(self) -> int:
        """Retries Harbor made within runs, summed over resumes. Only the last attempt of a
        retried trial stays on disk; `job.log` names each retried exception."""
        return self.reported.n_retries

    @property
    def datasets(self) -> tuple[DatasetSettings, ...]:
        return tuple(self.config.datasets)

    @property
    def dataset_refs(self) -> list[str]:
        """Each dataset as people write it, such as `hbench-demo@1.0`."""
        return [d.ref_label for d in self.config.datasets]

    @property
    def agents(self) -> tuple[AgentSettings, ...]:
        return tuple(self.config.agents)

    @property
    def agent_names(self) -> list[str]:
        """Each agent the config names, without repeats: built-in names or custom classes."""
        return list(dict.fromkeys(a.label for a in self.config.agents))

    @property
    def model_names(self) -> list[str]:
        """Each model the config names, as given (`provider/name`), without repeats."""
        return list(dict.fromkeys(a.model_name for a in self.config.agents if a.model_name))

    @property
    def n_attempts(self) -> int:
        return self.config.n_attempts

    @property
    def retry(self) -> RetrySettings:
        return self.config.retry

    @property
    def environment(self) -> EnvironmentSettings:
        return self.config.environment

    @property
    def timeout_multipliers(self) -> dict[str, float]:
        """The effective timeout multiplier of each phase (`TIMEOUT_PHASES`)."""
        return {phase: self.config.phase_multiplier(phase) for phase in TIMEOUT_PHASES}

    @property
    def results(self) -> tuple[Trial, ...]:
        """The trials that ended and wrote a result."""
        return tuple(t for t in self.trials if t.has_result)
