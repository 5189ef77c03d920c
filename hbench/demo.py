"""The demo dataset `hbench-demo@1.0` in a run: laid out where an issued spec names it, its
tasks' image made where Harbor's docker environment runs them, and the Harbor job config
that runs it. The dataset itself ships with the registry
(`registry.demo`).
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from hbench.errors import HbenchError
from hbench.sandbox import IMPORT_PATH
from registry.demo import (
    BUNDLED_REGISTRY,
    DATASET_NAME,
    DATASET_VERSION,
    IMAGE,
    IMAGE_CONTEXT,
    materialize,
)

BUILD_SECONDS = 600.0
"""The longest the demo image's build may take: the tasks' own `build_timeout_sec`."""


def lay_out(datasets: Iterable[object], cwd: Path) -> list[Path]:
    """Write the bundled demo dataset where a job's datasets name it by `BUNDLED_REGISTRY`,
    below `cwd` (where Harbor reads relative paths from); returns the registries written."""
    written = []
    for dataset in datasets:
        if (
            isinstance(dataset, Mapping)
            and dataset.get("name") == DATASET_NAME
            and dataset.get("registry_path") == BUNDLED_REGISTRY
        ):
            written.append(materialize((cwd / BUNDLED_REGISTRY).parent))
    return written


def names_demo(datasets: Iterable[object]) -> bool:
    """Whether a job's datasets include the demo dataset, from wherever it is read."""
    return any(isinstance(d, Mapping) and d.get("name") == DATASET_NAME for d in datasets)


def names_image(tasks_dir: Path) -> bool:
    """Whether a task in this folder of tasks starts from the demo tasks' image."""
    return any(_docker_image(toml) == IMAGE for toml in tasks_dir.glob("*/task.toml"))


def _docker_image(task_toml: Path) -> object:
    try:
        task = tomllib.loads(task_toml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # Harbor's own reading of the task says what is wrong with it
    environment = task.get("environment")
    return environment.get("docker_image") if isinstance(environment, dict) else None


def ensure_image(docker: str | None = None) -> bool:
    """Build the demo tasks' image (`registry.demo.IMAGE`) from their own Dockerfile unless
    the daemon has it; True if built. Harbor's docker environment starts each demo trial
    from it (the tasks name it as their `docker_image`), so a job builds it once at most,
    not a Compose project per trial. `demo-image-failed` when the build fails."""
    cli = docker or shutil.which("docker")
    if cli is None:
        return False  # Harbor's own check then says Docker is not installed
    found = subprocess.run(
        [cli, "image", "inspect", "--format", "{{.Id}}", IMAGE],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    if found.returncode == 0:
        return False
    built = subprocess.run(
        [cli, "build", "--quiet", "--tag", IMAGE, str(IMAGE_CONTEXT)],
        capture_output=True, text=True, timeout=BUILD_SECONDS, check=False,
    )  # fmt: skip
    if built.returncode != 0:
        raise HbenchError(
            "demo-image-failed",
            f"the demo tasks' image {IMAGE} could not be built from {IMAGE_CONTEXT} "
            f"(docker build exited {built.returncode}): {built.stderr.strip()[-600:]}",
        )
    return True


def demo_spec(
    registry: Path,
    job_name: str,
    *,
    agent: str = "oracle",
    n_attempts: int = 1,
    environment: str | None = None,
) -> dict[str, object]:
    """A Harbor job config running the demo dataset in the bubblewrap sandbox, or in the
    Harbor environment type `environment` names (such as `docker`).

    The service issues specs of this shape for the demo board; tests and the
    walkthrough use it to run the demo without a service.
    """
    where = {"import_path": IMPORT_PATH} if environment is None else {"type": environment}
    return {
        "job_name": job_name,
        "n_attempts": n_attempts,
        "agents": [{"name": agent}],
        "environment": where,
        "datasets": [
            {"name": DATASET_NAME, "version": DATASET_VERSION, "registry_path": str(registry)}
        ],
    }
