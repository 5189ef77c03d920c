"""The board checks: which boards a stored job fits. Each check is a small function of the
evidence, as the store checks are (`app.checks.store_checks`).

A job that passes the store checks is kept privately on Your bench whatever these say. Each
failure here is a note, shown on Your bench and in the upload's answer, saying why the job
fits no board; publishing the job is refused with that note's code. Spec:
../shared/spec/hbench-upload-a-job.txt ("Check the job": tasks from your own folder go on
Your bench but on no board; to publish, no prompt template or extra instructions).
"""

from __future__ import annotations

from app.checks.evidence import Evidence
from app.checks.table import Check, Outcome, failed, failed_one, passed, skipped
from hbench.codes import named
from hbench.jobs.config import JobConfig

PROMPT_KWARG = "prompt_template_path"
"""The agent option through which Harbor's agents take a prompt template."""

ENVIRONMENT_REFUSED = "board-environment-refused"
LOCAL_TASKS = "board-local-tasks"
PROMPT_NOT_ISSUED = "job-prompt-not-issued"
PLACEMENT_PROMPT = "board-prompt-needs-issued-run"
"""Placement's code for a prompt; the board check says it as `job-prompt-not-issued`."""
OTHER_BOARD_CHECKS_CODES = frozenset({LOCAL_TASKS, ENVIRONMENT_REFUSED, PLACEMENT_PROMPT})
"""Placement's codes that a board check other than `board-cell` gives in its own words
(placement's prompt code is `job-prompt-not-issued` here)."""


def environment_allowed(evidence: Evidence) -> Outcome:
    if evidence.issued is not None:
        return skipped("an issued run runs where its spec says (the spec-matches check)")
    placement = evidence.placement
    refused = [p for p in placement.problems if p.code == ENVIRONMENT_REFUSED] if placement else []
    if refused:
        return failed(refused)
    if placement is None or not (placement.fits or placement.opens):
        return skipped("the job fits no board, so no board's environments apply")
    return passed("its environment is allowed on the boards it fits")


def tasks_from_registry(evidence: Evidence) -> Outcome:
    job = evidence.job
    if job is None:
        return skipped("the job can't be read")
    local = bool(job.config.tasks) or any(d.name is None for d in job.datasets)
    if local or _placement_says(evidence, LOCAL_TASKS):
        return failed_one(
            LOCAL_TASKS,
            "the job ran tasks from a folder (--path), not a dataset from a registry: "
            "it stays private on Your bench, on no board. Run a dataset from a "
            "registry (`-d name@version`) to publish a result",
            "config.json",
        )
    return passed("a dataset from a registry")


def board_cell(evidence: Evidence) -> Outcome:
    """What else keeps the job off every board: placement's own answer, beyond the codes the
    checks above give (their notes would say the same twice)."""
    if evidence.job is None:
        return skipped("the job can't be read")
    notes = [p for p in evidence.board_notes if p.code not in OTHER_BOARD_CHECKS_CODES]
    if notes:
        return failed(notes)
    if any(p.code in OTHER_BOARD_CHECKS_CODES for p in evidence.board_notes):
        return skipped("the checks above say why it fits no board")
    return passed("it fits a board of its tasks, model and settings, or opens one")


def _placement_says(evidence: Evidence, code: str) -> bool:
    return any(p.code == code for p in evidence.board_notes)


def prompt_needs_issued_run(evidence: Evidence) -> Outcome:
    """A self-reported job with a prompt is kept, on no board: a board check."""
    if evidence.issued is not None:
        return skipped("an issued run's prompt is checked against its spec")
    outcome = prompt_outcome(evidence)
    if outcome.status == "passed" and _placement_says(evidence, PLACEMENT_PROMPT):
        note = next(p for p in evidence.board_notes if p.code == PLACEMENT_PROMPT)
        return failed_one(PROMPT_NOT_ISSUED, note.message, "config.json")
    return outcome


def prompt_outcome(evidence: Evidence) -> Outcome:
    job, issued = evidence.job, evidence.issued
    if job is None:
        return skipped("the job can't be read")
    used = prompt_texts(job.config)
    if not used:
        return passed("no prompt template and no extra instructions")
    if issued is not None and prompt_texts(JobConfig.model_validate(dict(issued.spec))):
        return passed(f"{', '.join(used)}, as issued (the spec-matches check compares them)")
    if issued is not None:
        why = f"its run {issued.run_id} was issued without them"
        fix = "Run the run's spec.json as issued, or issue a run with them"
    else:
        why = (
            "only an issued run may use them on a board, so the site knows them before the "
            "run; the job stays private on Your bench, on no board"
        )
        fix = "To publish, issue a run with them"
    return failed_one(
        PROMPT_NOT_ISSUED,
        f"the job used {' and '.join(used)}, but {why}. {fix} "
        "(`declarative.prompt_template` or `declarative.extra_instructions`) and run "
        "its spec, or run the benchmark again without them",
        "config.json",
    )


def prompt_texts(config: JobConfig) -> list[str]:
    """What of a config changes the agent's prompt: a template, extra instructions."""
    used = [
        f"a prompt template (agents[{i}].kwargs.{PROMPT_KWARG})"
        for i, agent in enumerate(config.agents)
        if agent.kwargs.get(PROMPT_KWARG)
    ]
    extra = len(config.extra_instructions) + len(config.extra_instruction_paths)
    if extra:
        used.append(f"{extra} extra instruction{'s' if extra > 1 else ''}")
    return used


BOARD_CHECKS: tuple[Check, ...] = (
    Check(
        "tasks-from-registry", "It ran a dataset from a registry", tasks_from_registry,
        named(LOCAL_TASKS),
    ),
    Check(
        "prompt-needs-issued-run", "No prompt template or instructions unless issued",
        prompt_needs_issued_run, named(PROMPT_NOT_ISSUED),
    ),
    Check(
        "environment-allowed", "Its environment is allowed where it goes", environment_allowed,
        named(ENVIRONMENT_REFUSED),
    ),
    Check(
        "board-cell", "It fits a board of its tasks, model and settings", board_cell,
        named(
            "job-not-placeable", "board-dataset-unpinned", "task-digest-mismatch",
            "board-attempts-refused",
        ),
    ),
)  # fmt: skip
"""Which boards a stored job fits: each failure is a note on Your bench, not a refusal."""
