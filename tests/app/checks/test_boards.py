"""The boards a job fits: an issued run's own, placement's, or none and why."""

from __future__ import annotations

from typing import Any

from app.checks.boards import boards_for
from app.checks.evidence import IssuedSpec
from hbench.jobs.config import JobConfig
from hbench.jobs.models import Job
from registry.loader import Registry


def changed(job: Job, **config: Any) -> Job:
    settings = JobConfig.model_validate({**job.config.model_dump(mode="json"), **config})
    return job.model_copy(update={"config": settings})


def test_a_demo_job_fits_the_demo_board(job: Job, registry: Registry) -> None:
    boards = boards_for(job, registry, None)

    assert boards.fits == ("hbench-demo",)
    assert boards.opens is None and boards.notes == ()
    assert boards.facts is not None and boards.facts.dataset == "hbench-demo@1.0"


def test_an_issued_run_fits_the_board_it_was_issued_for(job: Job, registry: Registry) -> None:
    issued = IssuedSpec("run-1", {}, "0" * 64, "hbench-demo-quick", "oracle-a1b2c3")

    boards = boards_for(job, registry, issued)

    assert boards.fits == ("hbench-demo-quick",)
    assert boards.placement is None


def test_tasks_from_a_folder_fit_no_board(job: Job, registry: Registry) -> None:
    boards = boards_for(changed(job, datasets=[{"path": "/srv/tasks"}]), registry, None)

    assert boards.fits == () and boards.opens is None
    assert [note.code for note in boards.notes] == ["board-local-tasks"]


def test_a_dataset_without_a_version_fits_no_board(job: Job, registry: Registry) -> None:
    unpinned = [{"name": "hbench-demo", "registry_path": "/srv/registry.json"}]

    boards = boards_for(changed(job, datasets=unpinned), registry, None)

    assert boards.facts is None
    assert [note.code for note in boards.notes] == ["board-dataset-unpinned"]


def test_a_custom_agent_class_fits_no_board(job: Job, registry: Registry) -> None:
    boards = boards_for(changed(job, agents=[{"name": "my_agents:Clever"}]), registry, None)

    assert boards.facts is None
    (note,) = boards.notes
    assert note.code == "job-not-placeable"
    assert "agent" in note.message


def test_another_dataset_opens_a_board_of_its_own(job: Job, registry: Registry) -> None:
    docker = changed(
        job,
        datasets=[{"name": "my-bench", "version": "2.0", "registry_url": "https://x.example"}],
        environment={"type": "docker"},
    )

    boards = boards_for(docker, registry, None)

    assert boards.fits == ()
    assert boards.opens is not None and boards.opens.dataset == "my-bench@2.0"
