"""Read one trial folder of a Harbor job into a `Trial`: its config, lock and result.

A trial without `result.json` (interrupted, or still running) is read as a `Trial` without
a result, named from its lock or config.
"""

from __future__ import annotations

from pathlib import Path

from hbench.jobs.files import (
    TimingFile,
    TrialConfigFile,
    TrialLockFile,
    TrialResultFile,
    TrialTaskFile,
)
from hbench.jobs.loading import CONFIG, LOCK, RESULT, load_model
from hbench.jobs.models import StepRewards, Timing, Trial
from hbench.jobs.scoring import primary_reward


def read_trial(folder: Path, job: Path) -> Trial:
    """The trial in `folder` of the job folder `job`."""
    config = (
        load_model(folder / CONFIG, TrialConfigFile, job) if (folder / CONFIG).is_file() else None
    )
    lock = load_model(folder / LOCK, TrialLockFile, job) if (folder / LOCK).is_file() else None
    digest = lock.task.digest if lock else None
    if not (folder / RESULT).is_file():
        task = config.task if config else None
        return Trial(
            trial_name=folder.name,
            path=folder,
            has_result=False,
            job_id=_str(config.job_id if config else None),
            task_name=(lock.task.name if lock else None) or _task_name(task),
            task_digest=digest,
            source=task.source if task else None,
        )
    result = load_model(folder / RESULT, TrialResultFile, job)
    trial = _trial_from_result(folder, result, digest)
    return trial.model_copy(update={"locked_task_name": lock.task.name}) if lock else trial


def _task_name(task: TrialTaskFile | None) -> str | None:
    if task is None:
        return None
    return task.name or (Path(task.path).name if task.path else None)


def _trial_from_result(folder: Path, result: TrialResultFile, digest: str | None) -> Trial:
    n_input, n_cache, n_output, cost = result.usage()
    rewards = result.verifier_result.rewards if result.verifier_result else None
    model = result.agent_info.model_info
    return Trial(
        trial_name=folder.name,
        path=folder,
        has_result=True,
        trial_id=str(result.id),
        job_id=_str(result.config.job_id),
        task_name=result.task_name,
        task_digest=digest,
        source=result.source,
        rewards=dict(rewards) if rewards is not None else None,
        reward=primary_reward(rewards),
        exception_type=result.exception_info.exception_type if result.exception_info else None,
        exception_message=(
            result.exception_info.exception_message if result.exception_info else None
        ),
        started_at=result.started_at,
        finished_at=result.finished_at,
        environment_setup=_timing(result.environment_setup),
        agent_setup=_timing(result.agent_setup),
        agent_execution=_timing(result.agent_execution),
        verifier=_timing(result.verifier),
        steps=_steps(result),
        n_input_tokens=n_input,
        n_cache_tokens=n_cache,
        n_output_tokens=n_output,
        cost_usd=cost,
        agent_name=result.agent_info.name,
        agent_version=result.agent_info.version,
        model_name=model.name if model else None,
        model_provider=model.provider if model else None,
    )


def _steps(result: TrialResultFile) -> tuple[StepRewards, ...] | None:
    if result.step_results is None:
        return None
    return tuple(
        StepRewards(
            step_name=step.step_name or "",
            rewards=dict(step.verifier_result.rewards)
            if step.verifier_result and step.verifier_result.rewards is not None
            else None,
        )
        for step in result.step_results
    )


def _timing(timing: TimingFile | None) -> Timing | None:
    return Timing(started_at=timing.started_at, finished_at=timing.finished_at) if timing else None


def _str(value: object | None) -> str | None:
    return None if value is None else str(value)
