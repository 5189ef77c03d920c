"""How Your bench shows a job's regrade and the evidence its run would carry if published,
in plain words: pure, over the job as the API shows it (`app.bench.schemas.JobInfo`).

What each level proves and doesn't is `registry.evidence.TEXTS`, the site's words too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.bench.schemas import RegradeDifference, RegradeInfo
from registry.evidence import LEVELS, TEXTS, Level

PENDING = frozenset({"queued", "running"})
"""Statuses that keep a job off the boards until the regrade ends (`regrade-pending`)."""


@dataclass(frozen=True)
class DifferenceRow:
    """One trial whose regrade gave other rewards than the job records, as its table shows it."""

    task: str
    trial: str
    recorded: str
    regraded: str
    why: str


@dataclass(frozen=True)
class RegradeView:
    """A job's regrade in plain words, and what it means for publishing the job."""

    status: str
    headline: str
    detail: str | None
    differences: tuple[DifferenceRow, ...]

    @property
    def pending(self) -> bool:
        """Still queued or running: the job can be published once it ends."""
        return self.status in PENDING

    @property
    def disagreed(self) -> bool:
        """The regrade gave other rewards: the job can't be published (`regrade-mismatch`)."""
        return self.status == "disagreed"

    @property
    def holds_publishing(self) -> bool:
        return self.pending or self.disagreed


_WAITING = {
    "queued": "it waits for the service's regrade worker, usually a few minutes",
    "running": "the tasks' own verifiers are running on the outputs the job recorded",
}


def regrade_view(info: RegradeInfo) -> RegradeView:
    """What the regrade found, or that it hasn't yet: each status in its own words."""
    status, note = info.status, info.note
    rows = tuple(_difference(d) for d in info.differences)
    if status in PENDING:
        return RegradeView(status, "Regrading…", _WAITING[status], rows)
    if status == "agreed":
        headline = "Regraded: every graded trial got the same rewards"
        return RegradeView(status, headline, note, rows)
    if status == "disagreed":
        found = note or f"{len(rows)} graded trials got other rewards when graded again"
        return RegradeView(status, f"Regrade disagreed: {found}", None, rows)
    if status == "failed":
        return RegradeView(
            status, f"Regrade failed: {note or 'the regrade could not run'}", None, rows
        )
    return RegradeView(status, f"Not regradable: {note or 'no reason was recorded'}", None, rows)


def _difference(difference: RegradeDifference) -> DifferenceRow:
    regraded = "no reward" if difference.regraded is None else rewards(difference.regraded)
    return DifferenceRow(
        difference.task,
        difference.trial,
        rewards(difference.recorded),
        regraded,
        difference.why or "",
    )


def rewards(values: Mapping[str, float]) -> str:
    """Rewards by name, as `reward 1` (several separated by commas)."""
    return ", ".join(f"{name} {value:g}" for name, value in sorted(values.items())) or "none"


@dataclass(frozen=True)
class LevelView:
    """One level of evidence: its name, and what it proves and doesn't."""

    level: Level
    title: str
    proves: str
    does_not_prove: str

    @property
    def tooltip(self) -> str:
        return f"{self.title}: proves {self.proves}. Does not prove {self.does_not_prove}."


def evidence_view(levels: Iterable[Level]) -> list[LevelView]:
    """The levels held, in the order pages show them."""
    held = set(levels)
    return [
        LevelView(level, TEXTS[level].title, TEXTS[level].proves, TEXTS[level].does_not_prove)
        for level in LEVELS
        if level in held
    ]
