"""Shared fixtures: the demo dataset and real Harbor jobs run in the bubblewrap sandbox.

Real jobs are run once per test session and copied into each test that changes them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF, materialize
from tools import dockerhost

HARBOR = str(Path(sys.executable).with_name("harbor"))
os.environ["HARBOR_TELEMETRY"] = "0"
# The CLI's consoles read COLUMNS when first made and keep it; pytest-xdist's workers start
# with COLUMNS=80. Without it, each CLI test's own COLUMNS decides the width of its tables.
os.environ.pop("COLUMNS", None)


@pytest.fixture(scope="session")
def demo_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry.json naming the demo tasks by absolute paths."""
    return materialize(tmp_path_factory.mktemp("demo-dataset"))


def run_harbor(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the Harbor CLI and fail the test with its output when it fails."""
    result = subprocess.run(
        [HARBOR, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    if result.returncode != 0:
        pytest.fail(f"harbor {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


HarborJobFactory = Callable[..., Path]


@pytest.fixture(scope="session")
def harbor_job(tmp_path_factory: pytest.TempPathFactory, demo_registry: Path) -> HarborJobFactory:
    """Run a real Harbor job of the demo dataset once per session; returns its folder.

    `harbor_job("name", "-a", "nop", "-k", "2")` runs `harbor run` with those flags on
    top of the demo dataset and the sandbox environment. Copy the folder before
    changing it: other tests share it.
    """
    cache: dict[tuple[str, ...], Path] = {}
    root = tmp_path_factory.mktemp("harbor-jobs")

    def make(job_name: str, *flags: str) -> Path:
        key = (job_name, *flags)
        if key not in cache:
            run_harbor(
                root,
                "run", "-y", "-q",
                "-d", DATASET_REF, "--registry-path", str(demo_registry),
                "--env", IMPORT_PATH,
                "-o", "jobs", "--job-name", job_name,
                *flags,
            )  # fmt: skip
            cache[key] = root / "jobs" / job_name
        return cache[key]

    return make


@pytest.fixture(scope="session")
def docker_host() -> Iterator[dockerhost.Lease]:
    """Docker for the tests marked `docker`: the daemon, Compose and the demo tasks' base
    image, made ready once per session by tools/dockerhost.py (its file lock keeps xdist
    workers and other sessions from starting or building twice). A daemon started here
    stops when its last user ends. Skips, with the reason, where Docker can't run."""
    try:
        lease = dockerhost.acquire()
    except dockerhost.DockerUnavailableError as error:
        pytest.skip(f"Docker can't run here: {error}")
    try:
        yield lease
    finally:
        lease.release()


@pytest.fixture
def copy_job(tmp_path: Path) -> Callable[[Path], Path]:
    """Copy a shared job folder into this test's own folder, to change it freely."""

    def copy(job_dir: Path) -> Path:
        dest = tmp_path / "jobs" / job_dir.name
        shutil.copytree(job_dir, dest, symlinks=True)
        return dest

    return copy


SOFTENED_TEST = "#!/bin/bash\n# Softened: passes whatever the agent did.\n" + (
    "echo 1 > /logs/verifier/reward.txt\n"
)


@pytest.fixture(scope="session")
def softened_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real job of the demo dataset whose `prime-factor` tests were softened to pass
    whatever the agent did, run by the oracle (5 of 5), unsealed: what someone who edits a
    benchmark's tests would upload."""
    root = tmp_path_factory.mktemp("softened")
    registry = materialize(root)
    (root / "tasks" / "prime-factor" / "tests" / "test.sh").write_text(SOFTENED_TEST)
    run_harbor(
        root,
        "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(registry),
        "--env", IMPORT_PATH, "-o", "jobs", "--job-name", "softened",
    )  # fmt: skip
    return root / "jobs" / "softened"
