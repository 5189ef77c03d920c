"""Where the service finds the task files it regrades a dataset with, and whether a task's
verifier can run apart from the agent.

The demo dataset travels with hbench. Any other dataset version is found under the
`HBENCH_REGRADE_TASKS_DIR` folder as `<name>@<version>/<task folder>/`, a checkout the
operator keeps (for a pinned benchmark, the same files `hbench registry pin` read). The
worker checks each folder's digest against the job's before it grades anything with it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hbench.jobs.task_digest import task_name
from registry.demo import DATASET_REF
from registry.demo import TASKS_DIR as DEMO_TASKS_DIR


def dataset_folder(dataset: str | None, tasks_root: Path | None) -> Path | None:
    """The folder of a dataset version's task folders, or None when the service has none."""
    if dataset is None:
        return None
    if dataset == DATASET_REF:
        return DEMO_TASKS_DIR
    if tasks_root is None or "/" in dataset or dataset.startswith("."):
        return None
    folder = tasks_root / dataset
    return folder if folder.is_dir() else None


def task_folders(dataset_dir: Path) -> dict[str, Path]:
    """Each task folder of a dataset folder, by the name Harbor gives the task."""
    return {
        task_name(folder): folder
        for folder in sorted(dataset_dir.iterdir())
        if (folder / "task.toml").is_file()
    }


def verifies_apart(task_dir: Path) -> bool:
    """Whether the task's verifier runs in an environment of its own, as Harbor's regrade
    needs (`harbor/models/task/verifier_mode.py`): `[verifier] environment_mode =
    "separate"`, or a `[verifier.environment]` table; for a task of steps, every step's."""
    config = _toml(task_dir / "task.toml")
    verifier = _table(config, "verifier")
    steps = config.get("steps")
    if isinstance(steps, list) and steps:
        tables = [_table(step, "verifier") for step in steps if isinstance(step, dict)]
        return all(_separate(table, verifier) for table in tables)
    return _separate(verifier, {})


def _separate(verifier: dict[str, Any], inherited: dict[str, Any]) -> bool:
    mode = verifier.get("environment_mode", inherited.get("environment_mode"))
    if mode is not None:
        return bool(mode == "separate")
    return "environment" in verifier or "environment" in inherited


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
