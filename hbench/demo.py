"""The demo dataset `hbench-demo@1.0` in a run: laid out where an issued spec names it, and
the Harbor job config that runs it. The dataset itself ships with the registry
(`registry.demo`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from hbench.sandbox import IMPORT_PATH
from registry.demo import BUNDLED_REGISTRY, DATASET_NAME, DATASET_VERSION, materialize


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
