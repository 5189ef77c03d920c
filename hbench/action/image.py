"""The runner image the run step's container runs: the `image` input, this version's image
when the daemon has it, or one built from the action's Dockerfile."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from hbench import __version__
from hbench.action.container import CLEANUP_SECONDS, docker_binary, execute
from hbench.action.protocol import Actions, Inputs
from hbench.errors import HbenchError

DEFAULT_IMAGE = f"hbench-runner:{__version__}"
"""The tag the image is built under from `actions/run/Dockerfile` when no `image` is given."""
PULL_SECONDS = 300
"""How long the build's base may take to pull before the step gives up on building."""


def docker_build(action_path: Path, image: str) -> list[str]:
    """Build the runner image from this action's Dockerfile; the repository is its context."""
    source = action_path.resolve().parents[1]
    dockerfile = action_path / "Dockerfile"
    return ["docker", "build", "--tag", image, "--file", str(dockerfile), str(source)]


def dockerfile_base(dockerfile: Path) -> str | None:
    """The image the Dockerfile builds on by default: its `ARG BASE=` line's value."""
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        name, sep, value = line.removeprefix("ARG ").partition("=")
        if line.startswith("ARG ") and sep and name.strip() == "BASE":
            return value.strip()
    return None


def image_present(docker: str, image: str, env: Mapping[str, str]) -> bool:
    """Whether the daemon has the image already (no registry is asked)."""
    argv = [docker, "image", "inspect", "--format", "{{.Id}}", image]
    try:
        done = subprocess.run(
            argv, env=dict(env), capture_output=True, check=False, timeout=CLEANUP_SECONDS
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def pull_base(docker: str, base: str, env: Mapping[str, str]) -> str | None:
    """Pull the build's base within `PULL_SECONDS`; None when it came, else why not."""
    try:
        done = subprocess.run(
            [docker, "pull", "--quiet", base], env=dict(env), capture_output=True, text=True,
            check=False, timeout=PULL_SECONDS,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"its registry did not answer within {PULL_SECONDS} s"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return lines[-1] if lines else f"`docker pull` exited with {done.returncode}"
    return None


def runner_image(
    actions: Actions, inputs: Inputs, env: Mapping[str, str], tag: str = DEFAULT_IMAGE
) -> str:
    """The image to run in: the `image` input (a release pins its own there); else this
    version's image when the daemon has it (`make runner-image` or a pull made it); else
    one built from this action's Dockerfile, on a base that is here or can be pulled.
    A base out of reach stops the step before any build (`action-image-unavailable`)."""
    if (given := inputs.get("image")) is not None:
        return given
    docker = docker_binary(env)
    if image_present(docker, tag, env):
        actions.log(f"using the runner image {tag}, which this runner has already")
        return tag
    action_path = Path(inputs.required("action-path"))
    dockerfile = action_path / "Dockerfile"
    base = dockerfile_base(dockerfile)
    if base is not None and not image_present(docker, base, env):
        actions.log(f"pulling {base}, the base of the runner image")
        if (why := pull_base(docker, base, env)) is not None:
            raise HbenchError(
                "action-image-unavailable",
                f"the runner image {tag} is not on this runner, and its base {base} "
                f"can't be pulled ({why}), so it can't be built: pass the input `image` (a "
                f"runner image this runner has or can pull), or build {tag} here "
                "first (`make runner-image` makes it on a base of Debian's packages)",
            )
    actions.log(f"building the runner image {tag} from {dockerfile}")
    execute(docker_build(action_path, tag), env, "docker build")
    return tag
