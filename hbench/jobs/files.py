"""The other JSON files of a Harbor job folder, as Harbor 0.25 writes them.

Only the fields hbench reads are modelled; unknown keys are ignored, since
Harbor adds fields between versions. Shapes follow `reference/harbor.md` §3:
the job's `result.json` (JobResult without trial results) and `lock.json`
(JobLock), and each trial's `result.json` (TrialResult), `config.json`
(TrialConfig) and `lock.json` (TrialLock).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class EvalStatsFile(_File):
    """`stats.evals[key]`: Harbor's own figures for one agent, model and dataset group."""

    n_trials: int = 0
    n_errors: int = 0
    metrics: list[dict[str, JsonValue]] = Field(default_factory=list)
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    reward_stats: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    """Per reward key, each value (as text, `"1.0"`) and the trials that got it."""
    exception_stats: dict[str, list[str]] = Field(default_factory=dict)


class JobStatsFile(_File):
    """`stats` of the job's `result.json`."""

    n_completed_trials: int = 0
    n_errored_trials: int = 0
    n_running_trials: int = 0
    n_pending_trials: int = 0
    n_cancelled_trials: int = 0
    n_retries: int = 0
    evals: dict[str, EvalStatsFile] = Field(default_factory=dict)
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_counts(cls, data: Any) -> Any:
        # Before 0.13 the counters were `n_trials` and `n_errors`.
        if isinstance(data, dict):
            data = {**data}
            data.setdefault("n_completed_trials", data.get("n_trials", 0))
            data.setdefault("n_errored_trials", data.get("n_errors", 0))
        return data


class JobResultFile(_File):
    """The job's `result.json`: identity, progress and Harbor's aggregate figures."""

    id: UUID
    started_at: datetime
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    n_total_trials: int = Field(ge=0)
    stats: JobStatsFile = Field(default_factory=JobStatsFile)


class HarborInfoFile(_File):
    version: str | None = None
    git_commit_hash: str | None = None
    is_editable: bool | None = None


class TaskLockFile(_File):
    name: str
    digest: str
    type: str | None = None
    source: str | None = None


class TrialLockFile(_File):
    """A trial's `lock.json`, or one entry of the job lock's `trials`."""

    task: TaskLockFile


class JobLockFile(_File):
    """The job's `lock.json`: the only record of the Harbor version that ran."""

    created_at: datetime | None = None
    """When the job first started, in UTC: kept when the job is resumed."""
    harbor: HarborInfoFile = Field(default_factory=HarborInfoFile)
    trials: list[TrialLockFile] = Field(default_factory=list)


class TrialTaskFile(_File):
    path: str | None = None
    name: str | None = None
    source: str | None = None


class SourceTrialFile(_File):
    """`source_trial` of a regrade's trial config: the recorded trial it graded again."""

    trial_id: UUID | None = None
    path: str | None = None


class TrialConfigFile(_File):
    """A trial's `config.json` (also embedded in its `result.json` as `config`)."""

    task: TrialTaskFile = Field(default_factory=TrialTaskFile)
    job_id: UUID | None = None
    source_trial: SourceTrialFile | None = None


class TimingFile(_File):
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ExceptionFile(_File):
    exception_type: str
    exception_message: str = ""
    occurred_at: datetime | None = None


class ModelInfoFile(_File):
    name: str
    provider: str | None = None


class AgentInfoFile(_File):
    name: str
    version: str
    model_info: ModelInfoFile | None = None


class UsageFile(_File):
    """`agent_result`: what the agent reported about its own usage; nothing checks it."""

    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class VerifierResultFile(_File):
    rewards: dict[str, float] | None = None


class StepResultFile(_File):
    step_name: str | None = None
    agent_result: UsageFile | None = None
    verifier_result: VerifierResultFile | None = None


class TrialResultFile(_File):
    """A trial's `result.json`, written once the trial ended."""

    id: UUID
    task_name: str
    trial_name: str
    source: str | None = None
    task_id: dict[str, JsonValue] = Field(default_factory=dict)
    config: TrialConfigFile = Field(default_factory=TrialConfigFile)
    agent_info: AgentInfoFile
    agent_result: UsageFile | None = None
    verifier_result: VerifierResultFile | None = None
    exception_info: ExceptionFile | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: TimingFile | None = None
    agent_setup: TimingFile | None = None
    agent_execution: TimingFile | None = None
    verifier: TimingFile | None = None
    step_results: list[StepResultFile] | None = None

    def usage(self) -> tuple[int | None, int | None, int | None, float | None]:
        """Token and cost totals as Harbor adds them up (`compute_token_cost_totals`):
        the trial's own `agent_result`, else the sum over its steps; None when unreported."""
        if self.agent_result is not None:
            contexts = [self.agent_result]
        else:
            contexts = [s.agent_result for s in self.step_results or [] if s.agent_result]
        return (
            sum_reported([c.n_input_tokens for c in contexts]),
            sum_reported([c.n_cache_tokens for c in contexts]),
            sum_reported([c.n_output_tokens for c in contexts]),
            sum_reported([c.cost_usd for c in contexts]),
        )


def sum_reported[N: (int, float)](values: list[N | None]) -> N | None:
    """Add up what agents reported, as Harbor does: None only when none reported anything."""
    reported = [v for v in values if v is not None]
    return sum(reported[1:], reported[0]) if reported else None
