"""dockerd started in the background, waited for, and stopped by its pid
(`tools.dockerhost` decides when, under its lock)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from tools.shell import DockerUnavailableError, is_root, run, tail

START_SECONDS = 60.0
STOP_SECONDS = 30.0


def daemon_answers(docker: str) -> bool:
    try:
        answer = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True, text=True, timeout=20, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    return answer.returncode == 0 and bool(answer.stdout.strip())


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, never reaped here, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def is_dockerd(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "dockerd"
    except OSError:
        return False


def start_daemon(docker: str, log: Path) -> int:
    """Start dockerd in the background and wait until it answers; return its pid."""
    if not is_root():
        raise DockerUnavailableError(
            "the Docker daemon is not running, and starting it takes root: run as root, "
            "or start it yourself (`sudo systemctl start docker`) and join the docker group"
        )
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    # sh starts dockerd in a session of its own and exits: the daemon outlives whoever
    # started it (an xdist worker, `make docker-up`), and is stopped by its pid.
    script = 'setsid "$1" >>"$2" 2>&1 </dev/null & echo $!'
    pid = int(run(["sh", "-c", script, "sh", dockerd, str(log)]).stdout.strip())
    deadline = time.monotonic() + START_SECONDS
    while not daemon_answers(docker):
        if not alive(pid):
            raise DockerUnavailableError(
                f"dockerd exited as it started; this kernel or container may not support "
                f"it (cgroups, overlayfs, iptables). Its log, {log}:\n{tail(log)}"
            )
        if time.monotonic() > deadline:
            stop_daemon(pid)
            raise DockerUnavailableError(
                f"dockerd did not answer within {START_SECONDS:.0f} s. Its log, {log}:\n{tail(log)}"
            )
        time.sleep(0.25)
    return pid


def stop_daemon(pid: int) -> None:
    """Stop the dockerd of that pid: SIGTERM (it stops its containers), then SIGKILL."""
    if not (alive(pid) and is_dockerd(pid)):
        return
    os.kill(pid, 15)
    deadline = time.monotonic() + STOP_SECONDS
    while alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            deadline = time.monotonic() + STOP_SECONDS
        time.sleep(0.1)
