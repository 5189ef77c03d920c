"""Waiting for the Docker daemon before Harbor starts: real commands stand in for `docker
info` (one that fails until its third call, one that hangs), and a clock the test moves."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hbench.docker_daemon import uses_docker, wait_for_daemon
from hbench.errors import HbenchError
from hbench.runner import run_harbor

FAILS_TWICE = """
import pathlib, sys
calls = pathlib.Path(sys.argv[1])
calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
if len(calls.read_text()) < 3:
    sys.exit("Cannot connect to the Docker daemon at unix:///var/run/docker.sock")
print("28.2.2")
"""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def test_it_returns_as_soon_as_the_daemon_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock, calls = Clock(), tmp_path / "calls"
    command = (sys.executable, "-c", FAILS_TWICE, str(calls))
    wait_for_daemon(command=command, clock=clock, pause=clock.pause)
    assert calls.read_text() == "xxx"
    assert clock.pauses == [1.0, 1.0]
    said = capsys.readouterr().err
    assert "waiting for the Docker daemon (exited with status 1: Cannot connect" in said
    assert "the Docker daemon answered after 2 s" in said


def test_a_daemon_that_answers_at_once_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    wait_for_daemon(command=("true",), clock=clock, pause=clock.pause)
    assert clock.pauses == []
    assert capsys.readouterr().err == ""


def test_a_slow_daemon_stops_the_run_with_the_rule_code() -> None:
    clock = Clock()
    with pytest.raises(HbenchError) as raised:
        wait_for_daemon(
            seconds=3, call_seconds=0.2, command=("sleep", "5"), clock=clock, pause=clock.pause
        )
    assert raised.value.code == "docker-unavailable"
    assert "within 3 s (the last call took more than 0.2 s)" in str(raised.value)
    assert clock.pauses == [1.0, 1.0, 1.0]


def test_a_slow_answer_is_asked_again_and_handed_to_harbor_at_the_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Answers slower than the quick bound: asked again until the wait is over, then
    Harbor gets its own try (it allows ten seconds)."""
    clock = Clock()
    wait_for_daemon(
        seconds=2, quick_seconds=0.05, command=("sleep", "0.2"), clock=clock, pause=clock.pause
    )
    assert clock.pauses == [1.0, 1.0]
    said = capsys.readouterr().err
    assert "waiting for the Docker daemon (answered in 0.2 s, slower than 0.05 s)" in said
    assert "the Docker daemon answered after 2 s" in said


def test_only_the_docker_environment_waits() -> None:
    assert uses_docker({"type": "docker"})
    # A spec naming no environment runs in Harbor's default one, Docker.
    assert uses_docker({}) and uses_docker(None) and uses_docker({"force_build": True})
    assert not uses_docker({"type": "docker", "import_path": "hbench.sandbox:Sandbox"})
    assert not uses_docker({"import_path": "hbench.sandbox:Sandbox"})
    assert not uses_docker({"type": "daytona"})
    assert not uses_docker("docker")


def test_harbor_starts_once_the_daemon_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--env docker` with a daemon that fails its first `docker info`: hbench asks again,
    and Harbor starts only after the answer."""
    bin_dir, jobs, log = tmp_path / "bin", tmp_path / "jobs", tmp_path / "log"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(
        f"#!/bin/sh\nif [ -e {log} ]; then echo docker-answered >>{log}; echo 28.2.2; exit 0; fi\n"
        f"echo docker-failed >{log}; echo 'Cannot connect to the Docker daemon' >&2; exit 1\n"
    )
    harbor = bin_dir / "harbor"
    harbor.write_text(
        f"#!/bin/sh\necho harbor >>{log}\nmkdir -p {jobs}/j\ntouch {jobs}/j/config.json\n"
    )
    for script in (docker, harbor):
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr("hbench.runner.harbor_binary", lambda: str(harbor))
    assert run_harbor(["--env", "docker", "-o", str(jobs)], jobs) == jobs / "j"
    assert log.read_text().split() == ["docker-failed", "docker-answered", "harbor"]


def fake_tools(tmp_path: Path, harbor_body: str) -> tuple[Path, Path, Path]:
    """A `docker` that answers, and a `harbor` of this shell body: its folder, the jobs
    folder, and the log of their calls."""
    bin_dir, jobs, log = tmp_path / "bin", tmp_path / "jobs", tmp_path / "log"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(f"#!/bin/sh\necho docker >>{log}\n")
    (bin_dir / "harbor").write_text(f"#!/bin/sh\necho harbor >>{log}\n{harbor_body}")
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return bin_dir, jobs, log


def test_harbor_refused_by_its_own_daemon_check_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Harbor's check found the daemon slow once: hbench waits for it and starts Harbor
    again, which runs the job."""
    bin_dir, jobs, log = fake_tools(tmp_path, "")
    (bin_dir / "harbor").write_text(
        f"#!/bin/sh\necho harbor >>{log}\n"
        f"if [ $(grep -c harbor {log}) -lt 2 ]; then\n"
        "  echo 'Docker daemon is not running. Please start Docker and try again.' >&2; exit 1\n"
        f"fi\nmkdir -p {jobs}/j && touch {jobs}/j/config.json\n"
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr("hbench.runner.harbor_binary", lambda: str(bin_dir / "harbor"))
    assert run_harbor(["-o", str(jobs)], jobs) == jobs / "j"
    assert log.read_text().split() == ["docker", "harbor", "docker", "harbor"]
    said = capfd.readouterr().err
    assert "Docker daemon is not running" in said  # Harbor's own words pass through
    assert "too slow to answer (try 1 of 3); hbench waits for the daemon" in said


def test_harbor_failing_otherwise_is_not_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, jobs, log = fake_tools(tmp_path, "echo 'the config is invalid' >&2; exit 2\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr("hbench.runner.harbor_binary", lambda: str(bin_dir / "harbor"))
    with pytest.raises(HbenchError) as raised:
        run_harbor(["--env", "docker", "-o", str(jobs)], jobs)
    assert raised.value.code == "harbor-failed"
    assert log.read_text().split() == ["docker", "harbor"]
