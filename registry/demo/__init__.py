"""The demo dataset `hbench-demo@1.0`: five tiny shell tasks the registry ships beside its
default data, so the demo board's benchmark always has its tasks at hand.

`registry.json` beside this file names the tasks by paths relative to the
repository's root. `materialize()` copies the tasks elsewhere and writes a
registry whose paths are absolute, so the dataset runs from any folder.
`hbench.demo` lays it out before a run and builds the demo's job configs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

DATASET_NAME = "hbench-demo"
DATASET_VERSION = "1.0"
DATASET_REF = f"{DATASET_NAME}@{DATASET_VERSION}"
HERE = Path(__file__).parent
TASKS_DIR = HERE / "tasks"


IMAGE = "hbench-demo-task:bookworm-1"
"""The image every demo task names as its `docker_image`: what each task's own
environment/Dockerfile builds (the five are one file), made once per machine by
`hbench.demo.ensure_image`, so Harbor's docker environment starts each trial from it
instead of building a Compose project per trial. A change to the Dockerfile takes a new
tag (tests/registry/test_demo_image.py holds the two together)."""
IMAGE_CONTEXT = TASKS_DIR / "count-lines" / "environment"
"""The build context `IMAGE` is made from: one task's environment, as every other's."""


BUNDLED_REGISTRY = ".hbench/hbench-demo/registry.json"
"""Where a spec the service issues names the demo's registry: relative to the folder the run
starts in, where hbench lays the bundled dataset out before Harbor starts (`hbench.demo.lay_out`).
The spec names no file on the service's machine, so it runs anywhere hbench is installed: a
contributor's machine, a GitHub runner, the runner image."""

LAY_OUT_COMMAND = "hbench registry demo-dataset"
"""The command that writes the bundled dataset at `BUNDLED_REGISTRY` below the folder it runs
in, so `harbor run --registry-path` finds it there."""


def bundled_dataset() -> dict[str, str]:
    """The demo dataset as an issued spec names it: travelling with hbench itself."""
    return {"name": DATASET_NAME, "version": DATASET_VERSION, "registry_path": BUNDLED_REGISTRY}


def task_names() -> list[str]:
    """The demo's task names, sorted."""
    return sorted(p.name for p in TASKS_DIR.iterdir() if (p / "task.toml").is_file())


def materialize(dest: Path) -> Path:
    """Copy the demo tasks under `dest` and return the path of a registry.json naming them."""
    dest = dest.resolve()
    tasks_dest = dest / "tasks"
    if tasks_dest.exists():
        shutil.rmtree(tasks_dest)
    shutil.copytree(TASKS_DIR, tasks_dest)
    spec = json.loads((HERE / "registry.json").read_text())
    for dataset in spec:
        for task in dataset["tasks"]:
            task["path"] = str(tasks_dest / task["name"])
    registry = dest / "registry.json"
    registry.write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    return registry
