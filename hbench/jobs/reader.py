"""Read a Harbor job folder into a `Job`, refusing damaged or foreign folders with a rule code.

`read_job` reads what Harbor 0.25 writes (`reference/harbor.md` §3) without
importing Harbor: the job's `config.json`, `result.json` and `lock.json`,
then every trial folder. It raises `HbenchError` only when the folder can't be
read as a job at all, naming every unreadable file at once; an interrupted
trial is read as a `Trial` without a result. Whether the job is finished and
complete is a separate question: `completeness_problems` lists every gap.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hbench.errors import HbenchError, Problem
from hbench.jobs.completeness import completeness_problems, require_complete
from hbench.jobs.config import JobConfig
from hbench.jobs.files import (
    JobLockFile,
    JobResultFile,
    TimingFile,
    TrialConfigFile,
    TrialLockFile,
    TrialResultFile,
    TrialTaskFile,
    sum_reported,
)
from hbench.jobs.manifest import MANIFEST_NAME
from hbench.jobs.models import (
    EvalScore,
    Job,
    LockedTask,
    LoggedRetry,
    StepRewards,
    Timing,
    Trial,
)
from hbench.jobs.scoring import mean_rewards, mean_score, pass_at_k, primary_reward

__all__ = [
    "Job",
    "Trial",
    "completeness_problems",
    "cut_off_trials",
    "read_job",
    "require_complete",
]

CONFIG, RESULT, LOCK, LOG = "config.json", "result.json", "lock.json", "job.log"

RETRY_LINE = re.compile(r"^Trial (\S+) failed with exception (\S+)\. Retrying in ")
"""The line Harbor 0.25's `TrialQueue` logs (at debug level, which job.log keeps) per retry."""


class _UnreadableError(Exception):
    """One file that could not be read; collected so every one is reported together."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.problem = problem


def read_job(path: Path) -> Job:
    """Read the job folder at `path`.

    Raises `HbenchError` with `job-not-found`, `job-not-harbor`,
    `job-result-missing` or `job-json-invalid` (one problem per bad file).
    """
    _check_is_job_folder(path)
    problems: list[Problem] = []
    config = _collect(problems, lambda: _load_model(path / CONFIG, JobConfig, path))
    if not (path / RESULT).is_file():
        problems.insert(0, _result_missing(path))
        raise HbenchError.from_problems(problems)
    raw_result = _collect(problems, lambda: _load_json(path / RESULT, path))
    if isinstance(raw_result, dict) and not {"id", "n_total_trials"} & raw_result.keys():
        raise HbenchError(
            "job-not-harbor",
            f"{path / RESULT} is not a Harbor job result (it has no `id` or `n_total_trials`); "
            f"{path} holds something other than a Harbor job. Pass the folder Harbor wrote "
            "for the job, such as jobs/<job-name>",
            path=str(path),
        )
    result = _collect(problems, lambda: _validate(raw_result, JobResultFile, path / RESULT, path))
    lock = None
    if (path / LOCK).is_file():
        lock = _collect(problems, lambda: _load_model(path / LOCK, JobLockFile, path))
    trials = [
        trial
        for folder in _trial_folders(path)
        if (trial := _collect(problems, partial(_read_trial, folder, path))) is not None
    ]
    if problems or config is None or result is None:
        raise HbenchError.from_problems(problems)
    return _assemble(path, config, result, lock, trials)


def _check_is_job_folder(path: Path) -> None:
    if not path.exists():
        raise HbenchError(
            "job-not-found",
            f"there is no folder at {path}. Pass the job's own folder, such as jobs/<job-name>",
            path=str(path),
        )
    if not path.is_dir():
        raise HbenchError(
            "job-not-found",
            f"{path} is a file, not a job folder. Pass the folder Harbor wrote, such as "
            "jobs/<job-name> (unpack an archive first)",
            path=str(path),
        )
    if (path / CONFIG).is_file():
        if (path.parent / CONFIG).is_file() and (path.parent / RESULT).is_file():
            raise HbenchError(
                "job-not-harbor",
                f"{path} is one trial of the job {path.parent}, not a job. "
                f"Pass the job's folder: {path.parent}",
                path=str(path),
            )
        return
    jobs = sorted(
        p.name for p in path.iterdir() if (p / CONFIG).is_file() and (p / RESULT).is_file()
    )
    if jobs:
        raise HbenchError(
            "job-not-harbor",
            f"{path} holds job folders ({', '.join(jobs[:5])}), not a job itself. "
            f"Pass one of them, such as {path / jobs[0]}",
            path=str(path),
        )
    raise HbenchError(
        "job-not-harbor",
        f"{path} has no config.json, so it is not a Harbor job folder. Pass the folder Harbor "
        "wrote for the job; it holds config.json, lock.json and result.json",
        path=str(path),
    )


def _result_missing(path: Path) -> Problem:
    return Problem(
        "job-result-missing",
        f"{path} has no result.json: Harbor stopped before it wrote one. "
        f"Continue the job with `hbench jobs resume -p {path}`",
        str(path / RESULT),
    )


def _trial_folders(path: Path) -> list[Path]:
    # Harbor treats every folder in a job as a trial (resume deletes those without a
    # result); dot-folders are tool state such as `.sources/`, never trials.
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def cut_off_trials(path: Path) -> list[Path]:
    """The trial folders of the job at `path` whose result.json is there but is not JSON
    (empty or cut off: Harbor was stopped while writing it). Harbor's resume deletes a
    trial folder without result.json and runs the trial again, but keeps one whose
    result.json it can't parse and runs the trial again beside it. A result that is JSON
    of another shape is not counted: that is an edit, not a stop."""
    return [
        folder
        for folder in _trial_folders(path)
        if (folder / RESULT).is_file()
        and _collect([], partial(_load_json, folder / RESULT, path)) is None
    ]


def _collect[T](problems: list[Problem], read: Callable[[], T]) -> T | None:
    try:
        return read()
    except _UnreadableError as unreadable:
        problems.append(unreadable.problem)
        return None


def _load_json(file: Path, job: Path) -> Any:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise _UnreadableError(_invalid(file, job, f"is not valid JSON ({exc})")) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = _invalid(file, job, f"is not valid JSON ({exc})", cut_off=True)
        raise _UnreadableError(problem) from None


def _load_model[M: BaseModel](file: Path, model: type[M], job: Path) -> M:
    return _validate(_load_json(file, job), model, file, job)


def _validate[M: BaseModel](data: Any, model: type[M], file: Path, job: Path) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        fields = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc']) or '(top level)'}`: {e['msg']}"
            for e in exc.errors()[:3]
        )
        raise _UnreadableError(
            _invalid(file, job, f"does not have Harbor's shape ({fields})")
        ) from None


def _invalid(file: Path, job: Path, what: str, *, cut_off: bool = False) -> Problem:
    """`job-json-invalid` for `file`; `cut_off` when it is not JSON at all, as a file
    Harbor was writing when the job stopped is left."""
    inside_trial = file.parent != job
    if (job / MANIFEST_NAME).is_file():
        # A sealed job's finished trials stay as sealed: resuming can't redo one.
        fix = "the file changed after the job was sealed; restore it, or run the job again"
    elif inside_trial and file.name == RESULT and cut_off:
        fix = (
            f"continue the job with `hbench jobs resume -p {job}`, which deletes the folder "
            f"{file.parent} and runs that trial again"
        )
    elif inside_trial and file.name == RESULT:
        fix = (
            f"delete the folder {file.parent} and continue the job with "
            f"`hbench jobs resume -p {job}`, which runs that trial again"
        )
    else:
        fix = (
            "the file was damaged or edited after Harbor wrote it; restore it, or run the job again"
        )
    return Problem("job-json-invalid", f"{file} {what}. Fix: {fix}", str(file))


def _read_trial(folder: Path, job: Path) -> Trial:
    config = (
        _load_model(folder / CONFIG, TrialConfigFile, job) if (folder / CONFIG).is_file() else None
    )
    lock = _load_model(folder / LOCK, TrialLockFile, job) if (folder / LOCK).is_file() else None
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
    result = _load_model(folder / RESULT, TrialResultFile, job)
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


def _locked_tasks(lock: JobLockFile, trials: list[Trial]) -> tuple[LockedTask, ...]:
    """The job's planned trials, each task named as its trials' results name it: Harbor's
    locks name a task from a folder by the folder, `name`, where its results give the
    task's `[task].name`, `org/name` (as every task `harbor tasks init` makes has one), and
    a plan is matched to the trials by name. Only that is read as the same task: a result
    naming another task is still one the lock never planned."""
    named = {
        t.locked_task_name: t.task_name
        for t in trials
        if t.locked_task_name and t.task_name and t.task_name.endswith(f"/{t.locked_task_name}")
    }
    return tuple(
        LockedTask(task_name=named.get(t.task.name, t.task.name), digest=t.task.digest)
        for t in lock.trials
    )


def _assemble(
    path: Path,
    config: JobConfig,
    result: JobResultFile,
    lock: JobLockFile | None,
    trials: list[Trial],
) -> Job:
    numbered = _number_attempts(trials)
    ended = [t for t in numbered if t.has_result]
    evals = _evals(ended)
    return Job(
        path=path,
        job_id=str(result.id),
        job_name=config.job_name or path.name,
        config=config,
        harbor_version=lock.harbor.version if lock else None,
        started_at=result.started_at,
        updated_at=result.updated_at,
        finished_at=result.finished_at,
        n_total_trials=result.n_total_trials,
        n_locked_trials=len(lock.trials) if lock else None,
        locked_tasks=_locked_tasks(lock, ended) if lock else (),
        lock_created_at=lock.created_at if lock else None,
        trials=tuple(numbered),
        reported=result.stats,
        logged_retries=_logged_retries(path / LOG),
        score=mean_score([t.rewards for t in ended]),
        pass_at_k=next(iter(evals.values())).pass_at_k if len(evals) == 1 else {},
        evals=evals,
        n_input_tokens=sum_reported([t.n_input_tokens for t in ended]),
        n_cache_tokens=sum_reported([t.n_cache_tokens for t in ended]),
        n_output_tokens=sum_reported([t.n_output_tokens for t in ended]),
        cost_usd=sum_reported([t.cost_usd for t in ended]),
    )


def _logged_retries(log: Path) -> tuple[LoggedRetry, ...]:
    if not log.is_file():
        return ()
    with log.open(encoding="utf-8", errors="replace") as lines:
        matches = (RETRY_LINE.match(line) for line in lines)
        return tuple(LoggedRetry(trial_name=m[1], exception_type=m[2]) for m in matches if m)


def _number_attempts(trials: list[Trial]) -> list[Trial]:
    """Number each task's trials 1..n per agent and model group, in the order they started."""
    groups: dict[tuple[str, str], list[Trial]] = defaultdict(list)
    for trial in trials:
        if trial.has_result:
            groups[(trial.evals_key or "", trial.task_name or "")].append(trial)
    numbered = {
        trial.trial_name: trial.model_copy(update={"attempt": index})
        for group in groups.values()
        for index, trial in enumerate(sorted(group, key=_start_order), start=1)
    }
    ordered = [numbered.get(t.trial_name, t) for t in trials]
    return sorted(
        ordered,
        key=lambda t: (
            not t.has_result,
            t.evals_key or "",
            t.task_name or "",
            t.attempt or 0,
            t.trial_name,
        ),
    )


def _start_order(trial: Trial) -> tuple[float, str]:
    started = trial.started_at.timestamp() if trial.started_at else math.inf
    return started, trial.trial_name


def _evals(ended: list[Trial]) -> dict[str, EvalScore]:
    groups: dict[str, list[Trial]] = defaultdict(list)
    for trial in ended:
        groups[trial.evals_key or ""].append(trial)
    return {
        key: EvalScore(
            key=key,
            n_trials=len(group),
            n_errors=sum(t.errored for t in group),
            mean=mean_score([t.rewards for t in group]),
            metrics=mean_rewards([t.rewards for t in group]),
            pass_at_k=pass_at_k((t.task_name or "", t.rewards) for t in group),
        )
        for key, group in sorted(groups.items())
    }
