"""What a published run proves: its evidence, as data and in plain words.

Every run on a board is at least *self-reported*: its files are unchanged since the
submitter sealed them and agree with each other. A run may also be *regraded* (the service
ran the tasks' verifiers again on the recorded outputs and got the same rewards), *issued*
(the service issued its spec before it ran) and, when issued, *run on CI* (the pinned
workflow issued, ran and uploaded it on a GitHub-hosted runner). Each says what it proves
and what it doesn't; nothing here calls a run more than its levels say.
`docs/trust.md` gives, for each level, what an attacker must control to forge it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from registry.schema import Record

Level = Literal["self-reported", "regraded", "issued", "run-on-ci"]
LEVELS: tuple[Level, ...] = ("self-reported", "regraded", "issued", "run-on-ci")
"""Every level, in the order pages show them."""

RegradeOutcome = Literal["agreed", "not-regradable", "failed"]


@dataclass(frozen=True)
class LevelText:
    """A level as people read it: its name, what it proves, and what it does not."""

    title: str
    proves: str
    does_not_prove: str


TEXTS: dict[Level, LevelText] = {
    "self-reported": LevelText(
        "Self-reported",
        "the job's files are unchanged since the submitter sealed them, and agree with each "
        "other: every reward with what its verifier wrote, the totals with the trials, the "
        "times with the run, the trials with the plan",
        "that the rewards are true: whoever ran the job can edit every copy of a reward the "
        "same way and seal it again",
    ),
    "regraded": LevelText(
        "Regraded",
        "the service ran the tasks' own verifiers again, in a sandbox, on the outputs the job "
        "recorded, and got the same reward for every trial",
        "how the outputs were made: forging it takes outputs that really pass the tests, "
        "whoever or whatever wrote them",
    ),
    "issued": LevelText(
        "Issued",
        "the service issued the run's spec before it ran, the job's config is that spec, and "
        "its board counts the run whether or not it is published",
        "where or how the job ran: the machine that ran it is the submitter's",
    ),
    "run-on-ci": LevelText(
        "Run on CI",
        "a trusted release of hbench's reusable workflow issued, ran and uploaded the job in "
        "one workflow run, on a runner GitHub hosts, with code and image pinned to its commit",
        "that the agent and model did the work the way a reader assumes: GitHub, or the "
        "workflow's own code, could forge it, and the model's provider answered its calls",
    ),
}


class RunEvidence(Record):
    """What the service established about a run's job, kept with its public record."""

    consistent: bool = Field(
        description="The job's files agreed with each other when it was uploaded."
    )
    tasks_pinned: bool = Field(
        description="Its tasks' digests matched the ones the registry pins for the benchmark; "
        "false when the benchmark pins none."
    )
    regrade: RegradeOutcome = Field(
        description="`agreed`: the service regraded every trial and got the same rewards; "
        "`not-regradable` or `failed`: it could not, for the reason in `regradeNote`."
    )
    regrade_note: str | None = Field(default=None, max_length=500)
    ci: bool = Field(
        default=False,
        description="Issued, run and uploaded by a trusted release of the reusable workflow "
        "on a GitHub-hosted runner, in one workflow run.",
    )


def run_levels(evidence: RunEvidence | None, *, issued: bool) -> list[Level]:
    """The levels a run holds. A run recorded before evidence was kept is self-reported
    (its upload was checked against its seal) and, when it was, issued."""
    levels: list[Level] = ["self-reported"]
    if evidence is not None and evidence.regrade == "agreed":
        levels.append("regraded")
    if issued:
        levels.append("issued")
        if evidence is not None and evidence.ci:
            levels.append("run-on-ci")
    return levels


def common_levels(runs: Iterable[list[Level]]) -> list[Level]:
    """The levels every one of several runs holds: what a board row of them proves."""
    held = [set(levels) for levels in runs]
    if not held:
        return []
    common = set.intersection(*held)
    return [level for level in LEVELS if level in common]


def describe(levels: Iterable[Level]) -> str:
    """One sentence of what the levels prove, for a run's page and its JSON."""
    held = set(levels)
    parts = [TEXTS[level].proves for level in LEVELS if level in held]
    return "; ".join(parts).capitalize() + "." if parts else ""
