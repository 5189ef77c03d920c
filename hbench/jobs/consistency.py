"""Do a job's files agree with each other? Every disagreement, each with its rule code.

Harbor writes each trial's rewards twice (the verifier's `reward.txt` or `reward.json`, and
the trial's `result.json`), the job's aggregates again in the job's `result.json`, the plan
and each task's digest in `lock.json` and again in each trial's, and times in all of them.
An honest job agrees with itself everywhere; an edit that misses one copy shows here.
A consistent edit of every copy does not: only grading the recorded outputs again catches
that (`docs/trust.md`). The checks read what `read_job` read, plus the reward files.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hbench.errors import Problem
from hbench.jobs.completeness import CANCELLED
from hbench.jobs.models import Job, Timing, Trial
from hbench.jobs.scoring import mean_rewards, pass_at_k

REWARD_JSON, REWARD_TEXT = "reward.json", "reward.txt"
REWARD_FILE_MAX_BYTES = 1 << 20
"""A reward file is a number or a small JSON object; past this it is not one."""
TIME_SLACK = timedelta(seconds=2)
"""How far a trial's times may stray past the job's: clocks are read at different moments."""
ZONE_STEP = 15 * 60
"""Every time zone's offset is a whole number of quarter hours."""
ZONE_SLACK = timedelta(minutes=5)
"""How far apart `result.json`'s local start and `lock.json`'s UTC start may be."""
MAX_NAMED = 5

RERUN = "Upload the job exactly as Harbor wrote it, or run the benchmark again for a new result"


def consistency_problems(job: Job) -> list[Problem]:
    """Every way the job's files disagree with each other; empty for an untouched job."""
    checks: tuple[Callable[[Job], list[Problem]], ...] = (
        reward_problems,
        stats_problems,
        timing_problems,
        plan_problems,
        digest_problems,
    )
    return [problem for check in checks for problem in check(job)]


# Rewards: the trial's result.json against what its verifier wrote.


def reward_problems(job: Job) -> list[Problem]:
    """`trial-reward-mismatch` for each trial whose recorded rewards its verifier didn't write."""
    problems = []
    for trial in job.results:
        if trial.steps is None:
            problems += _reward_problem(trial, trial.path / "verifier", trial.rewards, "")
            continue
        for step in trial.steps:
            where = trial.path / "steps" / step.step_name / "verifier"
            problems += _reward_problem(trial, where, step.rewards, f" (step {step.step_name})")
    return problems


def written_rewards(verifier_dir: Path) -> tuple[dict[str, float] | None, str]:
    """The rewards a verifier folder holds, parsed as Harbor 0.25 parses them
    (`harbor/verifier/verifier.py`): `reward.json` first, else `reward.txt`. None, with the
    file's name and why, when Harbor would have found no reward in it."""
    json_file, text_file = verifier_dir / REWARD_JSON, verifier_dir / REWARD_TEXT
    if json_file.is_file():
        return _json_rewards(_read(json_file)), REWARD_JSON
    if text_file.is_file():
        return _text_rewards(_read(text_file)), REWARD_TEXT
    return None, "no reward file"


def _read(file: Path) -> bytes | None:
    with file.open("rb") as stream:
        data = stream.read(REWARD_FILE_MAX_BYTES + 1)
    return data if len(data) <= REWARD_FILE_MAX_BYTES else None


def _json_rewards(data: bytes | None) -> dict[str, float] | None:
    if not data:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    rewards = {}
    for key, number in value.items():
        if not isinstance(number, int | float) or not math.isfinite(number):
            return None
        rewards[key] = float(number)
    return rewards


def _text_rewards(data: bytes | None) -> dict[str, float] | None:
    if not data:
        return None
    try:
        value = float(data.decode())
    except (UnicodeDecodeError, ValueError):
        return None
    return {"reward": value} if math.isfinite(value) else None


def _reward_problem(
    trial: Trial, verifier_dir: Path, recorded: Mapping[str, float] | None, step: str
) -> list[Problem]:
    # A trial without recorded rewards counts 0; whatever its verifier left, nothing is
    # gained by hiding a reward, so only recorded rewards are held to the files.
    if recorded is None:
        return []
    written, source = written_rewards(verifier_dir)
    if written is not None and _same_rewards(written, recorded):
        return []
    folder = f"{trial.trial_name}/{verifier_dir.relative_to(trial.path).as_posix()}"
    if written is None:
        seen = (
            f"{folder} holds no reward file"
            if source == "no reward file"
            else f"{folder}/{source} holds no reward Harbor could read"
        )
    else:
        seen = f"{folder}/{source} gives {_rewards_text(written)}"
    return [
        Problem(
            "trial-reward-mismatch",
            f"{seen}, but {trial.trial_name}/result.json records {_rewards_text(recorded)}"
            f"{step}: the rewards were edited after the verifier wrote them. {RERUN}",
            str(verifier_dir / source) if written is not None else str(verifier_dir),
        )
    ]


def _same_rewards(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)


def _rewards_text(rewards: Mapping[str, float]) -> str:
    return ", ".join(f"{key} {value:g}" for key, value in sorted(rewards.items()))


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# The job's result.json against its trials.


def stats_problems(job: Job) -> list[Problem]:
    """`job-result-mismatch` for each figure of the job's `result.json` its trials don't give.

    Checked once the job finished, when Harbor has recomputed the figures from every trial
    (`harbor/job.py`, `Job.run`); a running job's are live counts.
    """
    if not job.finished:
        return []
    reported, ended = job.reported, job.results
    differences = [
        *_count("n_completed_trials", reported.n_completed_trials, len(ended)),
        *_count("n_errored_trials", reported.n_errored_trials, sum(t.errored for t in ended)),
        *_count(
            "n_cancelled_trials",
            reported.n_cancelled_trials,
            sum(t.exception_type == CANCELLED for t in ended),
        ),
        *_usage_differences(job),
        *_evals_differences(job),
    ]
    return [
        Problem(
            "job-result-mismatch",
            f"the job's result.json says {field} is {said}, but its trials give {given}: the "
            f"file was edited, or trials were changed after the job ended. {RERUN}",
            str(job.path / "result.json"),
        )
        for field, said, given in differences
    ]


Difference = tuple[str, str, str]


def _count(field: str, said: int, given: int) -> list[Difference]:
    return [] if said == given else [(f"stats.{field}", str(said), str(given))]


def _usage_differences(job: Job) -> list[Difference]:
    reported = job.reported
    pairs: list[tuple[str, float | None, float | None]] = [
        ("n_input_tokens", reported.n_input_tokens, job.n_input_tokens),
        ("n_cache_tokens", reported.n_cache_tokens, job.n_cache_tokens),
        ("n_output_tokens", reported.n_output_tokens, job.n_output_tokens),
        ("cost_usd", reported.cost_usd, job.cost_usd),
    ]
    # A retried attempt's usage is subtracted again when it is replaced, which leaves 0
    # where no remaining trial reported any (`JobStats.remove_trial`).
    return [
        (f"stats.{field}", _text(said), _text(given))
        for field, said, given in pairs
        if not _close(said, given) and not (given is None and said == 0)
    ]


def _evals_differences(job: Job) -> list[Difference]:
    groups: dict[str, list[Trial]] = defaultdict(list)
    for trial in job.results:
        groups[trial.evals_key or ""].append(trial)
    reported = job.reported.evals
    differences: list[Difference] = []
    for key in sorted(groups.keys() | reported.keys()):
        trials, said = groups.get(key, []), reported.get(key)
        if said is None:
            differences.append((f"stats.evals[{key}]", "absent", f"{len(trials)} trials"))
            continue
        if not trials:
            differences.append((f"stats.evals[{key}]", f"{said.n_trials} trials", "no trial"))
            continue
        at = f"stats.evals[{key}]"
        graded = [t for t in trials if t.rewards is not None]
        differences += _count_at(at, "n_trials", said.n_trials, len(graded))
        differences += _count_at(at, "n_errors", said.n_errors, sum(t.errored for t in trials))
        differences += _listing(f"{at}.reward_stats", said.reward_stats, _reward_stats(trials))
        differences += _listing(
            f"{at}.exception_stats", {"": said.exception_stats}, {"": _exceptions(trials)}
        )
        differences += _metric_differences(at, said.metrics, trials, job)
        recomputed = pass_at_k((t.task_name or "", t.rewards) for t in trials)
        if not _same_numbers(said.pass_at_k, recomputed):
            differences.append((f"{at}.pass_at_k", _text(said.pass_at_k), _text(recomputed)))
    return differences


def _count_at(at: str, field: str, said: int, given: int) -> list[Difference]:
    return [] if said == given else [(f"{at}.{field}", str(said), str(given))]


def _reward_stats(trials: Iterable[Trial]) -> dict[str, dict[str, list[str]]]:
    stats: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for trial in trials:
        for key, value in (trial.rewards or {}).items():
            stats[key][repr(float(value))].append(trial.trial_name)
    return stats


def _exceptions(trials: Iterable[Trial]) -> dict[str, list[str]]:
    stats: dict[str, list[str]] = defaultdict(list)
    for trial in trials:
        if trial.exception_type is not None:
            stats[trial.exception_type].append(trial.trial_name)
    return stats


def _listing(
    at: str,
    said: Mapping[str, Mapping[str, list[str]]],
    given: Mapping[str, Mapping[str, list[str]]],
) -> list[Difference]:
    """Which trials each value lists, compared as sets; a value listing none is no value
    (Harbor leaves an emptied list behind when it replaces a retried attempt)."""

    def sets(listing: Mapping[str, Mapping[str, list[str]]]) -> dict[tuple[str, str], set[str]]:
        return {
            (key, _value_key(value)): set(names)
            for key, values in listing.items()
            for value, names in values.items()
            if names
        }

    said_sets, given_sets = sets(said), sets(given)
    if said_sets == given_sets:
        return []
    wrong = sorted(
        said_sets.keys() ^ given_sets.keys()
        | {k for k in said_sets.keys() & given_sets.keys() if said_sets[k] != given_sets[k]}
    )
    named = [f"{key}={value}" if key else value for key, value in wrong[:MAX_NAMED]]
    return [(at, f"other trials for {', '.join(named)}", "what the trials' results record")]


def _value_key(value: str) -> str:
    """A reward value as text, spelled one way (`1`, `1.0` and `1.00` are one value)."""
    try:
        return repr(float(value))
    except ValueError:
        return value


def _metric_differences(
    at: str, metrics: Sequence[Mapping[str, object]], trials: list[Trial], job: Job
) -> list[Difference]:
    # Only Harbor's default metric is recomputed here: a dataset's own metrics (a script,
    # a sum) are the dataset's to compute.
    if job.config.metrics or len(metrics) != 1 or set(metrics[0]) != {"mean"}:
        return []
    said = metrics[0]["mean"]
    given = mean_rewards([t.rewards for t in trials]).get("mean")
    if isinstance(said, int | float) and _close(float(said), given):
        return []
    return [(f"{at}.metrics[0].mean", _text(said), _text(given))]


def _same_numbers(a: Mapping[int, float], b: Mapping[int, float]) -> bool:
    return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in sorted(value.items())) + "}"
    return "none" if value is None else str(value)


# Times: every trial inside the job's run.


def timing_problems(job: Job) -> list[Problem]:
    """`trial-time-outside-job` for each trial whose times fall outside the job's run.

    The job's `result.json` times are the running machine's naive local time; `lock.json`
    records the same start in UTC, which gives the machine's offset from UTC.
    """
    if job.lock_created_at is None or job.finished_at is None:
        return []
    offset = zone_offset(job.started_at, job.lock_created_at)
    if offset is None:
        return [
            _time_problem(
                job,
                f"result.json says the job started at {job.started_at.isoformat()} (local "
                f"time), but lock.json at {job.lock_created_at.isoformat()}, and no time "
                "zone makes those the same moment",
                "result.json",
            )
        ]
    start = job.started_at.replace(tzinfo=UTC) - offset
    finish = job.finished_at.replace(tzinfo=UTC) - offset
    problems = []
    for trial in job.results:
        problems += _trial_time_problems(job, trial, start, finish)
    return problems


def zone_offset(local_start: datetime, utc_start: datetime) -> timedelta | None:
    """The machine's offset from UTC: the quarter hour nearest the gap between the two
    records of one start; None when no quarter hour is near it."""
    utc = _utc(utc_start).replace(tzinfo=None)
    gap = (local_start.replace(tzinfo=None) - utc).total_seconds()
    offset = timedelta(seconds=round(gap / ZONE_STEP) * ZONE_STEP)
    if abs(timedelta(seconds=gap) - offset) > ZONE_SLACK or abs(offset) > timedelta(hours=14):
        return None
    return offset


def _trial_time_problems(
    job: Job, trial: Trial, start: datetime, finish: datetime
) -> list[Problem]:
    where = f"{trial.trial_name}/result.json"
    if trial.started_at is None or trial.finished_at is None:
        return [_time_problem(job, f"{where} has no start or finish time", where)]
    begun, ended = _utc(trial.started_at), _utc(trial.finished_at)
    problems = []
    if begun < start - TIME_SLACK or ended > finish + TIME_SLACK:
        problems.append(
            _time_problem(
                job,
                f"{where} ran from {begun.isoformat()} to {ended.isoformat()}, outside the "
                f"job's run from {start.isoformat()} to {finish.isoformat()} (UTC)",
                where,
            )
        )
    if ended < begun:
        problems.append(_time_problem(job, f"{where} finished before it started", where))
    phases = {
        "environment_setup": trial.environment_setup,
        "agent_setup": trial.agent_setup,
        "agent_execution": trial.agent_execution,
        "verifier": trial.verifier,
    }
    outside = [name for name, phase in phases.items() if _outside(phase, begun, ended)]
    if outside:
        problems.append(
            _time_problem(
                job,
                f"{where} has phases outside the trial's own times: {', '.join(outside)}",
                where,
            )
        )
    return problems


def _outside(phase: Timing | None, begun: datetime, ended: datetime) -> bool:
    if phase is None:
        return False
    moments = [m for m in (phase.started_at, phase.finished_at) if m is not None]
    return any(_utc(m) < begun - TIME_SLACK or _utc(m) > ended + TIME_SLACK for m in moments)


def _utc(moment: datetime) -> datetime:
    """Harbor writes trial times in UTC with a `Z`; a time without a zone is read as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _time_problem(job: Job, what: str, where: str) -> Problem:
    return Problem(
        "trial-time-outside-job",
        f"{what}: the times were edited, or the trial was copied in from another run. {RERUN}",
        str(job.path / where),
    )


# The plan: lock.json's planned trials against result.json and the trial folders.


def plan_problems(job: Job) -> list[Problem]:
    """`job-plan-mismatch` when the trials, `result.json` and `lock.json` plan different runs."""
    if job.n_locked_trials is None:
        return []
    problems = []
    if job.n_total_trials != job.n_locked_trials:
        problems.append(
            f"result.json plans {job.n_total_trials} trials, but lock.json {job.n_locked_trials}"
        )
    planned = Counter(t.task_name for t in job.locked_tasks)
    per_task = job.n_attempts * max(len(job.config.agents), 1)
    uneven = sorted(task for task, n in planned.items() if n != per_task)
    if uneven:
        problems.append(
            f"lock.json plans other than {per_task} trials (attempts x agents) for {_named(uneven)}"
        )
    ran = Counter(t.task_name or "?" for t in job.results)
    unplanned = sorted(task for task, n in ran.items() if n > planned.get(task, 0))
    if unplanned:
        problems.append(f"trials ran that lock.json never planned, of {_named(unplanned)}")
    return [
        Problem(
            "job-plan-mismatch",
            f"{what}: trials or lock entries were added or removed. {RERUN}",
            str(job.path / "lock.json"),
        )
        for what in problems
    ]


# Task digests: each trial's lock.json against the job's.


def digest_problems(job: Job) -> list[Problem]:
    """`task-digest-inconsistent` when a task's digest differs between the job's lock, its
    entries, and its trials' locks."""
    if not job.locked_tasks:
        return []
    locked: dict[str, set[str]] = defaultdict(set)
    for entry in job.locked_tasks:
        locked[entry.task_name].add(entry.digest)
    problems = [
        f"lock.json gives the task {task} {len(digests)} different digests"
        for task, digests in sorted(locked.items())
        if len(digests) > 1
    ]
    for trial in job.results:
        digests = locked.get(trial.task_name or "", set())
        if trial.task_digest is None:
            problems.append(f"{trial.trial_name} has no lock.json with its task's digest")
        elif trial.task_digest not in digests:
            problems.append(
                f"{trial.trial_name}/lock.json gives its task {trial.task_name} the digest "
                f"{trial.task_digest[:19]}…, which the job's lock.json does not plan"
            )
    return [
        Problem(
            "task-digest-inconsistent",
            f"{what}: the locks were edited, or trials of other task files were copied in. {RERUN}",
            str(job.path / "lock.json"),
        )
        for what in problems
    ]


def task_digests(job: Job) -> dict[str, str]:
    """Each task's digest, as the job's `lock.json` records it (one per task when the job is
    consistent; the first one read otherwise)."""
    digests: dict[str, str] = {}
    for entry in job.locked_tasks:
        digests.setdefault(entry.task_name, entry.digest)
    return digests


def _named(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
