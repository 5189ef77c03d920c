"""Which boards an uploaded job fits: its issued run's board, or what placement finds.

An issued run keeps the board it was issued for. Any other job is placed by
`registry.placement.place` on the registry's boards. A job that fits none (tasks from a
folder, a dataset without a version, an agent no board can name) is not refused for it:
it stays on Your bench, and `notes` say why it fits no board. Which notes the stored job
keeps is the board checks' answer (`app.checks.board_checks`, `judged`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import ValidationError

from app.checks.evidence import IssuedSpec
from hbench.errors import HbenchError, Problem
from hbench.jobs.facts import facts_from_job
from hbench.jobs.models import Job
from registry.loader import Registry
from registry.pins import differing_tasks
from registry.pins import mismatch as pin_mismatch
from registry.placement import JobFacts, OpenBoard, Placement, pinned_digests, place

NOT_PLACEABLE = "job-not-placeable"


@dataclass(frozen=True)
class Boards:
    """Where a job may be published, and the facts placement read to tell."""

    facts: JobFacts | None
    """None when the job can't be described to placement at all (`notes` says why)."""
    placement: Placement | None
    """Placement's answer for a self-reported job; None for an issued run or no facts."""
    fits: tuple[str, ...] = ()
    opens: OpenBoard | None = None
    """The board publishing would open, when the job fits no existing one."""
    notes: tuple[Problem, ...] = ()
    """Why the job fits no board, when it doesn't."""


def boards_for(job: Job, registry: Registry, issued: IssuedSpec | None) -> Boards:
    """The boards a job fits; the open boards of the data repository are not consulted here,
    so publishing places the job again against them."""
    facts, notes = job_facts(job)
    if issued is not None:
        pinned = issued_run_pins(facts, registry, issued)
        if pinned:
            return Boards(facts=facts, placement=None, notes=pinned)
        return Boards(facts=facts, placement=None, fits=(issued.board,))
    if facts is None:
        return Boards(facts=None, placement=None, notes=notes)
    placement = place(facts, registry)
    return Boards(
        facts=facts,
        placement=placement,
        fits=placement.fits,
        opens=placement.opens,
        notes=placement.problems,
    )


def judged(boards: Boards, notes: tuple[Problem, ...]) -> Boards:
    """The boards once the board checks have run: none, with their failures as the notes,
    when any failed; else what placement found."""
    if not notes:
        return boards
    return replace(boards, fits=(), opens=None, notes=notes)


def issued_run_pins(
    facts: JobFacts | None, registry: Registry, issued: IssuedSpec
) -> tuple[Problem, ...]:
    """An issued run keeps its board only when it ran the task files the board takes."""
    if facts is None:
        return ()
    pinned = pinned_digests(registry, facts.dataset)
    if pinned is None:
        return ()
    differing = differing_tasks(pinned[0], facts.task_digests, facts.task_names)
    if not differing:
        return ()
    return (pin_mismatch(pinned[1], pinned[0], facts.task_digests, differing),)


def job_facts(job: Job) -> tuple[JobFacts | None, tuple[Problem, ...]]:
    """The facts placement reads, or why the job can't be described to it."""
    try:
        return facts_from_job(job), ()
    except HbenchError as error:
        return None, error.problems
    except ValidationError as error:
        where = ", ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()[:3]
        )
        message = (
            f"the job can't be described to the boards ({where}); it stays on Your bench. "
            "Boards take jobs of a built-in Harbor agent (such as terminus-2) that ran at "
            "least one task"
        )
        return None, (Problem(NOT_PLACEABLE, message),)
