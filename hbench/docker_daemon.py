"""Waiting for the Docker daemon before Harbor starts a job whose trials run in Docker.

Harbor checks the daemon once, with one `docker info` of ten seconds, and gives up on the
whole job when that call fails or is slow. A runner's daemon that is still starting, or
busy creating other containers, is often slower than that for a moment. hbench makes the
same call first (plain `docker info`: the client's plugins are listed too, which a
`--format` of the server's fields skips), once a second for up to two minutes, and starts
Harbor as soon as one answers within Harbor's ten seconds; after two minutes the run
stops with `docker-unavailable`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping

from hbench.errors import HbenchError

WAIT_SECONDS = 120.0
"""How long hbench waits for an answer before it gives up on the run."""
CALL_SECONDS = 10.0
"""The time one `docker info` gets: Harbor's own check's."""
PAUSE_SECONDS = 1.0
DOCKER = "docker"
"""Harbor's environment type for its Docker environment."""


def uses_docker(environment: object) -> bool:
    """Whether a job config's `environment` sends the trials to Harbor's Docker environment."""
    if not isinstance(environment, Mapping):
        return False
    return environment.get("type") == DOCKER and environment.get("import_path") is None


def wait_for_daemon(
    *,
    seconds: float = WAIT_SECONDS,
    call_seconds: float = CALL_SECONDS,
    command: tuple[str, ...] | None = None,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], None] = time.sleep,
) -> None:
    """Return once `docker info` answers within `call_seconds`; raise `docker-unavailable`
    when none has after `seconds`. Without a `docker` command it returns: Harbor's own
    check then says Docker is not installed."""
    if command is None:
        found = shutil.which(DOCKER)
        if found is None:
            return
        command = (found, "info")
    start = clock()
    said_waiting = False
    while True:
        last = _ask(command, call_seconds)
        if last is None:
            if said_waiting:
                print(f"the Docker daemon answered after {clock() - start:.0f} s", file=sys.stderr)
            return
        if clock() - start >= seconds:
            raise HbenchError(
                "docker-unavailable",
                f"the Docker daemon did not answer `docker info` within {seconds:.0f} s "
                f"(the last call {last}), so Harbor was not started",
            )
        if not said_waiting:
            print(
                f"waiting for the Docker daemon ({last}); up to {seconds:.0f} s",
                file=sys.stderr,
            )
            said_waiting = True
        pause(PAUSE_SECONDS)


def _ask(command: tuple[str, ...], call_seconds: float) -> str | None:
    """None when the daemon answered in time, else what went wrong, in a few words."""
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=call_seconds, check=False
        )
    except subprocess.TimeoutExpired:
        return f"took more than {call_seconds:g} s"
    except OSError as exc:
        return f"could not start: {exc.strerror}"
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    said = lines[-1][:200] if lines else "no output"
    return f"exited with status {done.returncode}: {said}"
