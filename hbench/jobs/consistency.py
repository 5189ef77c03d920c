"""Do a job's files agree with each other? Every disagreement, each with its rule code.

Harbor writes each trial's rewards twice (the verifier's `reward.txt` or `reward.json`, and
the trial's `result.json`), the job's aggregates again in the job's `result.json`, the plan
and each task's digest in `lock.json` and again in each trial's, and times in all of them.
An honest job agrees with itself everywhere; an edit that misses one copy shows here.
A consistent edit of every copy does not: only grading the recorded outputs again catches
that (`docs/trust.md`). The checks read what `read_job` read, plus the reward files.
"""

from __future__ import annotations

from collections.abc import Callable

from hbench.errors import Problem
from hbench.jobs.locks import digest_problems, plan_problems
from hbench.jobs.models import Job
from hbench.jobs.result_stats import stats_problems
from hbench.jobs.reward_files import reward_problems
from hbench.jobs.trial_times import timing_problems


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
