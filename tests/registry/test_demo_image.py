"""The demo tasks start from one prebuilt image (`registry.demo.IMAGE`): every task names it
as its `docker_image`, every task's Dockerfile is the one it is built from, and the pinned
digests are of the tasks as they are."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hbench.demo import ensure_image, names_demo, names_image
from hbench.errors import HbenchError
from registry.demo import IMAGE, IMAGE_CONTEXT, TASKS_DIR, bundled_dataset, task_names

IMAGE_CONTEXT_DOCKERFILE = (IMAGE_CONTEXT / "Dockerfile").read_text(encoding="utf-8")


@pytest.mark.parametrize("task", task_names())
def test_every_demo_task_names_the_image_its_own_dockerfile_builds(task: str) -> None:
    folder = TASKS_DIR / task
    environment = tomllib.loads((folder / "task.toml").read_text())["environment"]
    assert environment["docker_image"] == IMAGE
    # The image is made from one task's folder: every task's Dockerfile must be that one,
    # or a task would start from another image than its own Dockerfile makes.
    assert (folder / "environment" / "Dockerfile").read_text() == IMAGE_CONTEXT_DOCKERFILE


def test_the_image_is_named_for_a_job_of_the_demo_dataset_only() -> None:
    assert names_image(TASKS_DIR)
    assert not names_image(TASKS_DIR / "count-lines")  # a folder of no tasks
    assert names_demo([bundled_dataset()])
    assert names_demo([{"name": "hbench-demo", "version": "1.0", "registry_path": "x.json"}])
    assert not names_demo([{"name": "humaneval", "version": "1.0"}, "hbench-demo"])


def test_a_failed_build_says_so_with_its_rule_code(tmp_path: Path) -> None:
    docker = tmp_path / "docker"
    docker.write_text("#!/bin/sh\necho 'no such image' >&2; echo 'cannot build' >&2; exit 1\n")
    docker.chmod(0o755)
    with pytest.raises(HbenchError) as raised:
        ensure_image(str(docker))
    assert raised.value.code == "demo-image-failed"
    assert IMAGE in raised.value.detail and "cannot build" in raised.value.detail
