"""The shape of a rule table: rules, their outcomes, and the report of running them all.

A rule is a small function of the evidence returning an `Outcome`: passed, failed with
its problems, or skipped (what it reads could not be read; another rule says why).
`run_table` runs every rule and keeps every failure; an empty table is an error, since
it would accept anything (sigstore's `AllOf([])` raises the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.checks.evidence import Evidence
from hbench.errors import Problem

Status = Literal["passed", "failed", "skipped"]

MAX_PROBLEMS_PER_RULE = 20
"""A rule names at most this many failures, then counts the rest: a job edited wholesale
should get a readable refusal, not one of 10,000 lines."""


@dataclass(frozen=True)
class Outcome:
    """What one rule found: passed, failed (with its problems) or skipped, and a note why."""

    status: Status
    note: str
    problems: tuple[Problem, ...] = ()


def passed(note: str) -> Outcome:
    return Outcome("passed", note)


def skipped(note: str) -> Outcome:
    return Outcome("skipped", note)


def failed(problems: Sequence[Problem]) -> Outcome:
    if not problems:
        raise ValueError("a failed rule names at least one problem")
    shown = list(problems[:MAX_PROBLEMS_PER_RULE])
    more = len(problems) - len(shown)
    if more:
        last = problems[-1]
        shown.append(Problem(last.code, f"and {more} more problems of this kind", last.path))
    return Outcome("failed", shown[0].message, tuple(shown))


@dataclass(frozen=True)
class Rule:
    """One check: a stable name, what it checks in a line, the function that checks it, and
    every rule code its failures can carry (a test holds each failure to them)."""

    name: str
    title: str
    check: Callable[[Evidence], Outcome]
    codes: tuple[str, ...]


@dataclass(frozen=True)
class RuleResult:
    """A rule's outcome, as the upload's answer and the stored job show it."""

    rule: str
    title: str
    outcome: Outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": self.title,
            "status": self.outcome.status,
            "note": self.outcome.note,
        }


@dataclass(frozen=True)
class Report:
    """Every rule's result, in the table's order."""

    results: tuple[RuleResult, ...]

    @property
    def problems(self) -> list[Problem]:
        """Every failure of every rule, in the table's order."""
        return [problem for result in self.results for problem in result.outcome.problems]

    @property
    def accepted(self) -> bool:
        return not self.problems

    def unnamed(self, rules: Sequence[Rule]) -> list[tuple[str, str]]:
        """Each (rule, code) of a failure whose code its rule doesn't name: none, always."""
        named = {rule.name: rule.codes for rule in rules}
        return [
            (result.rule, problem.code)
            for result in self.results
            for problem in result.outcome.problems
            if problem.code not in named.get(result.rule, ())
        ]


def run_table(rules: Sequence[Rule], evidence: Evidence) -> Report:
    """Run every rule on the evidence; the report holds every failure."""
    if not rules:
        raise ValueError("an empty rule set checks nothing; pass at least one rule")
    return Report(tuple(RuleResult(r.name, r.title, r.check(evidence)) for r in rules))
