"""Waiting for the Docker daemon before Harbor starts a job whose trials run in Docker.

Harbor checks the daemon once, with one `docker info` of ten seconds, and gives up on the
whole job when that call fails or is slow. A runner's daemon that is still starting, or
busy building images and creating other containers, is slower than that for moments (a
plain `docker info` took 10.1 s on a loaded two-core machine while an image was built).
hbench makes the same call first (plain `docker info`: the client's plugins are listed
too, which a `--format` of the server's fields skips), once a second, and starts Harbor
as soon as one answers within five seconds, so Harbor's own call, a moment later, has
room. A daemon that keeps answering, only slowly, is handed to Harbor after two minutes;
one that never answers stops the run then with `docker-unavailable`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping

from hbench.errors import HbenchError

WAIT_SECONDS = 120.0
"""How long hbench waits for a quick answer."""
CALL_SECONDS = 10.0
"""The time one `docker info` gets: Harbor's own check's."""
QUICK_SECONDS = 5.0
"""An answer this fast leaves Harbor's call of ten seconds room."""
PAUSE_SECONDS = 1.0
DOCKER = "docker"
"""Harbor's environment type for its Docker environment."""


def uses_docker(environment: object) -> bool:
    """Whether a job config's `environment` sends the trials to Harbor's Docker environment:
    its type says docker, or it names neither a type nor an import path (Harbor's default)."""
    if environment is None:
        return True
    if not isinstance(environment, Mapping) or environment.get("import_path") is not None:
        return False
    return environment.get("type") in (None, DOCKER)


def wait_for_daemon(
    *,
    seconds: float = WAIT_SECONDS,
    call_seconds: float = CALL_SECONDS,
    quick_seconds: float = QUICK_SECONDS,
    command: tuple[str, ...] | None = None,
    clock: Callable[[], float] = time.monotonic,
    pause: Callable[[float], None] = time.sleep,
) -> None:
    """Return once `docker info` answers within `quick_seconds`, or after `seconds` of
    answers within `call_seconds` only; raise `docker-unavailable` when the last call after
    `seconds` did not answer. Without a `docker` command it returns: Harbor's own check
    then says Docker is not installed."""
    if command is None:
        found = shutil.which(DOCKER)
        if found is None:
            return
        command = (found, "info")
    start = clock()
    said_waiting = False
    while True:
        problem, took = _ask(command, call_seconds)
        waited = clock() - start
        if problem is None and (took <= quick_seconds or waited >= seconds):
            if said_waiting:
                print(f"the Docker daemon answered after {waited:.0f} s", file=sys.stderr)
            return
        if problem is None:
            problem = f"answered in {took:.1f} s, slower than {quick_seconds:g} s"
        elif waited >= seconds:
            raise HbenchError(
                "docker-unavailable",
                f"the Docker daemon did not answer `docker info` within {seconds:.0f} s "
                f"(the last call {problem}), so Harbor was not started",
            )
        if not said_waiting:
            print(
                f"waiting for the Docker daemon ({problem}); up to {seconds:.0f} s",
                file=sys.stderr,
            )
            said_waiting = True
        pause(PAUSE_SECONDS)


def _ask(command: tuple[str, ...], call_seconds: float) -> tuple[str | None, float]:
    """What went wrong, in a few words (None when the daemon answered), and how long the
    call took."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=call_seconds, check=False
        )
    except subprocess.TimeoutExpired:
        return f"took more than {call_seconds:g} s", call_seconds
    except OSError as exc:
        return f"could not start: {exc.strerror}", 0.0
    took = time.monotonic() - started
    if done.returncode == 0:
        return None, took
    lines = (done.stderr or done.stdout).strip().splitlines()
    said = lines[-1][:200] if lines else "no output"
    return f"exited with status {done.returncode}: {said}", took
