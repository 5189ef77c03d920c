"""Times: every trial, and each of its phases, inside the job's run.

The job's `result.json` records its run in the machine's local time, `lock.json` its start
in UTC, and each trial's `result.json` its own times in UTC; an edited time, or a trial
copied in from another run, falls outside.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hbench.errors import Problem
from hbench.jobs.agreement import RERUN
from hbench.jobs.models import Job, Timing, Trial

TIME_SLACK = timedelta(seconds=2)
"""How far a trial's times may stray past the job's: clocks are read at different moments."""
ZONE_STEP = 15 * 60
"""Every time zone's offset is a whole number of quarter hours."""
ZONE_SLACK = timedelta(minutes=5)
"""How far apart `result.json`'s local start and `lock.json`'s UTC start may be."""


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
