"""Whether an uploaded job can be regraded, decided at upload: pure, over the job as read.

A job can be regraded when the service has the task files it ran, every task's verifier
runs apart from the agent (Harbor's separate verifier mode, which `harbor job regrade`
needs), and redaction changed none of the outputs the verifiers read. Otherwise the job is
recorded as not regradable, with the reason in plain words, and it stays self-reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from app.db.models import RegradeStatus
from app.regrade.tasks import dataset_folder, task_folders, verifies_apart
from hbench.jobs.models import Job

OUTPUT_FOLDERS = frozenset({"agent", "artifacts"})
"""What a regrade restores from the job (`harbor/trial/regrade.py`): the recorded outputs."""
MAX_NAMED = 5


@dataclass(frozen=True)
class RegradePlan:
    """What upload records of the job's regrade: queued, or not regradable and why."""

    status: RegradeStatus
    note: str | None = None


@dataclass(frozen=True)
class RegradeInput:
    """What decides whether a job can be regraded."""

    job: Job
    dataset: str | None
    enabled: bool
    tasks_root: Path | None
    pinned: Mapping[str, str] | None
    """The benchmark's pinned task digests, when it pins them."""
    digests: Mapping[str, str]
    """The job's task digests, from its lock.json."""
    redactions: Mapping[str, int]

    @cached_property
    def folders(self) -> dict[str, Path]:
        folder = dataset_folder(self.dataset, self.tasks_root)
        return task_folders(folder) if folder is not None else {}

    @cached_property
    def ran(self) -> list[str]:
        return sorted({t.task_name for t in self.job.results if t.task_name})


def plan_regrade(given: RegradeInput) -> RegradePlan:
    """Queue the job's regrade, or say why it can't be regraded: the first check that fails."""
    for check in CHECKS:
        why = check(given)
        if why is not None:
            return RegradePlan(RegradeStatus.NOT_REGRADABLE, why)
    return RegradePlan(RegradeStatus.QUEUED)


def _enabled(given: RegradeInput) -> str | None:
    return None if given.enabled else "this service does not regrade jobs"


def _service_has_the_tasks(given: RegradeInput) -> str | None:
    if given.dataset is None:
        return (
            "its tasks came from a folder of the submitter's (`--path`), and the service has "
            "no copy of them to grade with"
        )
    if not given.folders:
        return f"the service keeps no copy of {given.dataset}'s tasks to grade with"
    missing = [task for task in given.ran if task not in given.folders]
    if missing:
        return f"the service's copy of {given.dataset} has no task {_named(missing)}"
    return None


def _pinned_files(given: RegradeInput) -> str | None:
    pinned = given.pinned
    if pinned is not None and any(given.digests.get(t) != pinned.get(t) for t in given.ran):
        return f"it ran other task files than the ones pinned for {given.dataset}"
    return None


def _verifiers_apart(given: RegradeInput) -> str | None:
    shared = [task for task in given.ran if not verifies_apart(given.folders[task])]
    if shared:
        return (
            f"the verifiers of {_named(shared)} run in the agent's own environment (Harbor's "
            "shared verifier mode), which is gone once the trial ends"
        )
    return None


def _outputs_unredacted(given: RegradeInput) -> str | None:
    touched = redacted_trials(given.redactions)
    if touched:
        return (
            f"the service replaced key-like values in the recorded outputs of {len(touched)} "
            f"trial{'s' if len(touched) > 1 else ''} ({_named(touched)}) before storing them, "
            "so grading them again would grade other outputs"
        )
    return None


CHECKS: tuple[Callable[[RegradeInput], str | None], ...] = (
    _enabled,
    _service_has_the_tasks,
    _pinned_files,
    _verifiers_apart,
    _outputs_unredacted,
)
"""In order: each check may rely on the ones before it having passed."""


def redacted_trials(redactions: Mapping[str, int]) -> list[str]:
    """The trials whose recorded outputs (`agent/`, `artifacts/`, a step's) redaction changed."""
    touched = set()
    for path, count in redactions.items():
        parts = PurePosixPath(path).parts
        if count and len(parts) > 2 and _is_output(parts):
            touched.add(parts[0])
    return sorted(touched)


def _is_output(parts: tuple[str, ...]) -> bool:
    if parts[1] in OUTPUT_FOLDERS:
        return True
    return len(parts) > 4 and parts[1] == "steps" and parts[3] in OUTPUT_FOLDERS


def _named(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
