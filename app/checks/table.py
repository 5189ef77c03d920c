"""The shape of a check table: checks, their outcomes, and the report of running them all.

A check is a small function of the evidence returning an `Outcome`: passed, failed with
its problems, or skipped (what it reads could not be read; another check says why).
`run_table` runs every check and keeps every failure; an empty table is an error, since
it would accept anything (sigstore's `AllOf([])` raises the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.checks.evidence import Evidence
from hbench.codes import Code
from hbench.errors import Problem

Status = Literal["passed", "failed", "skipped"]

MAX_PROBLEMS_PER_CHECK = 20
"""A check names at most this many failures, then counts the rest: a job edited wholesale
should get a readable refusal, not one of 10,000 lines."""


@dataclass(frozen=True)
class Outcome:
    """What one check found: passed, failed (with its problems) or skipped, and a note why."""

    status: Status
    note: str
    problems: tuple[Problem, ...] = ()


def passed(note: str) -> Outcome:
    return Outcome("passed", note)


def skipped(note: str) -> Outcome:
    return Outcome("skipped", note)


def failed_one(code: str, message: str, path: str | None = None) -> Outcome:
    """A check failed with one problem: `code`, in `path` of the job."""
    return failed([Problem(code, message, path)])


def failed(problems: Sequence[Problem]) -> Outcome:
    if not problems:
        raise ValueError("a failed check names at least one problem")
    shown = list(problems[:MAX_PROBLEMS_PER_CHECK])
    more = len(problems) - len(shown)
    if more:
        last = problems[-1]
        shown.append(Problem(last.code, f"and {more} more problems of this kind", last.path))
    return Outcome("failed", shown[0].message, tuple(shown))


@dataclass(frozen=True)
class Check:
    """One check: a stable name, what it checks in a line, the function that checks it, and
    every rule code its failures can carry, as the catalogue's objects (`hbench.codes.named`;
    a test holds each failure to them)."""

    name: str
    title: str
    check: Callable[[Evidence], Outcome]
    codes: tuple[Code, ...]

    @property
    def code_names(self) -> frozenset[str]:
        return frozenset(code.code for code in self.codes)


@dataclass(frozen=True)
class CheckResult:
    """A check's outcome, as the upload's answer and the stored job show it (under `rule`,
    the field's name since the first stored job)."""

    check: str
    title: str
    outcome: Outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.check,
            "title": self.title,
            "status": self.outcome.status,
            "note": self.outcome.note,
        }


@dataclass(frozen=True)
class Report:
    """Every check's result, in the table's order."""

    results: tuple[CheckResult, ...]

    @property
    def problems(self) -> list[Problem]:
        """Every failure of every check, in the table's order."""
        return [problem for result in self.results for problem in result.outcome.problems]

    @property
    def accepted(self) -> bool:
        return not self.problems

    def unnamed(self, checks: Sequence[Check]) -> list[tuple[str, str]]:
        """Each (check, code) of a failure whose code its check doesn't name: none, always."""
        named = {check.name: check.code_names for check in checks}
        return [
            (result.check, problem.code)
            for result in self.results
            for problem in result.outcome.problems
            if problem.code not in named.get(result.check, ())
        ]


def run_table(checks: Sequence[Check], evidence: Evidence) -> Report:
    """Run every check on the evidence; the report holds every failure."""
    if not checks:
        raise ValueError("an empty check table checks nothing; pass at least one check")
    return Report(tuple(CheckResult(c.name, c.title, c.check(evidence)) for c in checks))
