"""Comparing a job's rewards with the ones its regrade gave: pure.

Each trial of the regrade names the recorded trial it graded again (`source_trial`). A
trial the job graded must get the same rewards again; a trial the job never graded (it
errored before its verifier ran, and counts 0) is not held to anything, since grading
its partial outputs now could only raise the score the job claims.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Rewards = Mapping[str, float]


@dataclass(frozen=True)
class Recorded:
    """A trial as the job records it."""

    trial_id: str
    trial_name: str
    task: str
    rewards: Rewards | None


@dataclass(frozen=True)
class Regraded:
    """A trial of the regrade: the recorded trial it graded, and what its verifier gave."""

    source_trial_id: str
    rewards: Rewards | None
    exception_type: str | None = None


@dataclass(frozen=True)
class Difference:
    """A graded trial whose regrade gave other rewards, or none."""

    task: str
    trial: str
    recorded: Rewards
    regraded: Rewards | None
    why: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "trial": self.trial,
            "recorded": dict(self.recorded),
            "regraded": dict(self.regraded) if self.regraded is not None else None,
            "why": self.why,
        }


def differences(recorded: list[Recorded], regraded: list[Regraded]) -> list[Difference]:
    """Every graded trial whose regrade disagrees with the job, in task order."""
    by_source = {trial.source_trial_id: trial for trial in regraded}
    found = []
    for trial in sorted(recorded, key=lambda t: (t.task, t.trial_name)):
        if trial.rewards is None:
            continue
        again = by_source.get(trial.trial_id)
        if again is None:
            found.append(
                Difference(trial.task, trial.trial_name, trial.rewards, None, "not regraded")
            )
        elif again.rewards is None:
            why = again.exception_type or "the verifier wrote no reward"
            found.append(Difference(trial.task, trial.trial_name, trial.rewards, None, why))
        elif not _same(trial.rewards, again.rewards):
            found.append(Difference(trial.task, trial.trial_name, trial.rewards, again.rewards))
    return found


def _same(a: Rewards, b: Rewards) -> bool:
    return a.keys() == b.keys() and all(
        math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-9) for k in a
    )
