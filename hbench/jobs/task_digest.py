"""A task's digest as Harbor computes it: the durable identity `lock.json` records per task.

Harbor hashes a task's files (`task.toml`, `instruction.md`, `environment/`, `tests/`,
`solution/`, …, its ignores applied) into `task.digest` (`harbor/publisher/packager.py`,
`Packager.compute_content_hash`; ../shared/reference/harbor-trust.md). The registry pins these
digests per benchmark version, so a board takes only jobs of the tasks it names, unedited.
Computing one needs Harbor itself, as running a job does.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from hbench.errors import HbenchError

PREFIX = "sha256:"


def task_digest(task_dir: Path) -> str:
    """`sha256:<hex>` of the task's files, exactly as Harbor records it in `lock.json`."""
    try:
        from harbor.publisher.packager import Packager  # noqa: PLC0415 - Harbor is optional
    except ImportError:
        raise HbenchError(
            "harbor-missing",
            "computing a task's digest needs Harbor; install it with: pip install 'hbench[harbor]'",
        ) from None
    content_hash, _ = Packager.compute_content_hash(task_dir)
    return PREFIX + str(content_hash)


def task_name(task_dir: Path) -> str:
    """The name Harbor gives the task: `[task].name` of its task.toml, else its folder's name."""
    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise HbenchError(
            "registry-pin-invalid", f"{task_dir / 'task.toml'} can't be read ({error})"
        ) from None
    task = config.get("task")
    name = task.get("name") if isinstance(task, dict) else None
    return name if isinstance(name, str) and name else task_dir.name


def dataset_digests(tasks_root: Path) -> dict[str, str]:
    """Each task's digest by its name, for a folder of task folders (a dataset checkout)."""
    if not tasks_root.is_dir():
        raise HbenchError("registry-pin-invalid", f"{tasks_root} is not a folder of tasks")
    folders = sorted(p for p in tasks_root.iterdir() if (p / "task.toml").is_file())
    if not folders:
        raise HbenchError(
            "registry-pin-invalid",
            f"{tasks_root} holds no task folder (a folder with a task.toml); pass the "
            "dataset's folder of tasks",
        )
    digests: dict[str, str] = {}
    for folder in folders:
        name = task_name(folder)
        if name in digests:
            raise HbenchError(
                "registry-pin-invalid", f"{tasks_root} holds two tasks named {name!r}"
            )
        digests[name] = task_digest(folder)
    return dict(sorted(digests.items()))
